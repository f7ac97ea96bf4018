/**
 * The live {@link AgentTools}: `bash` over the composed executor, plus the task tools when a task
 * runtime is composed, and the six terminal tools when a {@link Terminals} service is. Approval,
 * Tasks, SandboxSessions, SessionPersistence and Terminals are optional; each call is recorded when
 * persistence is composed, so replays never parse text.
 *
 * @since 0.1.0
 */
import type * as Scope from "effect/Scope"
import * as Cause from "effect/Cause"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as PubSub from "effect/PubSub"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import { Approval } from "../services/Approval.js"
import { BashEnvRegistry } from "../services/BashEnvRegistry.js"
import { BashExecutor } from "../services/BashExecutor.js"
import { capEchoed } from "../services/internal/requestChecks.js"
import { SandboxSessions } from "../services/SandboxSessions.js"
import { SessionPersistence } from "../services/SessionPersistence.js"
import { Tasks } from "../services/Tasks.js"
import { Terminals } from "../services/Terminals.js"
import { whenTraced } from "../services/internal/whenTraced.js"
import { AgentTools, ToolError } from "../services/AgentTools.js"
import { abortedCallResult } from "./abortable.js"
import { CompletionNotices } from "../services/CompletionNotices.js"
import type { AgentTool, AnyAgentTool } from "./AgentTool.js"
import * as BashTool from "./BashTool.js"
import { makeBashTool } from "./internal/bashHandler.js"
import { containerSection } from "./internal/containerTexts.js"
import { networkSection } from "./internal/networkTexts.js"
import { makeTaskKillTool, makeTaskListTool, makeTaskOutputTool } from "./internal/taskHandlers.js"
import { makeTerminalTools } from "./internal/terminalHandlers.js"
import { PendingNotices } from "./PendingNotices.js"
import type * as TaskKillTool from "./TaskKillTool.js"
import type * as TaskListTool from "./TaskListTool.js"
import type * as TaskOutputTool from "./TaskOutputTool.js"
import type * as TerminalCloseTool from "./TerminalCloseTool.js"
import type * as TerminalListTool from "./TerminalListTool.js"
import type * as TerminalOpenTool from "./TerminalOpenTool.js"
import type * as TerminalReadTool from "./TerminalReadTool.js"
import type * as TerminalSendTool from "./TerminalSendTool.js"
import type * as TerminalSignalTool from "./TerminalSignalTool.js"
import { guidance as terminalGuidance } from "./terminalShared.js"

/**
 * Settings of {@link layer}.
 *
 * @since 0.1.0
 * @category models
 */
export interface Settings {
  /** Offer `run_in_background` (default true); when false a forced background call is refused. */
  readonly enableRunInBackground?: boolean
}

declare module "../services/AgentTools.js" {
  namespace AgentTools {
    // The tools this layer composes, by name.
    interface Registry {
      readonly bash: { readonly parameters: BashTool.Parameters; readonly value: BashTool.Value }
      readonly task_output: { readonly parameters: TaskOutputTool.Parameters; readonly value: TaskOutputTool.Value }
      readonly task_list: { readonly parameters: TaskListTool.Parameters; readonly value: TaskListTool.Value }
      readonly task_kill: { readonly parameters: TaskKillTool.Parameters; readonly value: TaskKillTool.Value }
      readonly terminal_open: { readonly parameters: TerminalOpenTool.Parameters; readonly value: TerminalOpenTool.Value }
      readonly terminal_send: { readonly parameters: TerminalSendTool.Parameters; readonly value: TerminalSendTool.Value }
      readonly terminal_read: { readonly parameters: TerminalReadTool.Parameters; readonly value: TerminalReadTool.Value }
      readonly terminal_signal: {
        readonly parameters: TerminalSignalTool.Parameters
        readonly value: TerminalSignalTool.Value
      }
      readonly terminal_close: {
        readonly parameters: TerminalCloseTool.Parameters
        readonly value: TerminalCloseTool.Value
      }
      readonly terminal_list: { readonly parameters: TerminalListTool.Parameters; readonly value: TerminalListTool.Value }
    }
  }
}

// The reference's terminal guidance, placed after the bash section.
const terminalPromptSection: AgentTools.PromptSection = { name: "tool:pty", order: 106, text: terminalGuidance }

/** The composed tools by name: each is the tool its module registers under that name. */
type Registered = { readonly [N in AgentTools.Name]?: AgentTool<AgentTools.Parameters<N>, AgentTools.Value<N>> }

// A bug in one tool must not end an agent's turn: the model gets an error result, the log the defect.
// The message is in the log line's text and the defect is its cause (logged as `{}`, an Error has no JSON).
const internalError = (name: string) => (defect: unknown) => {
  const message = `internal error in ${name}: ${capEchoed(defect instanceof Error ? defect.message : String(defect))}`
  return Effect.logError(message, Cause.die(defect)).pipe(Effect.zipRight(Effect.fail(new ToolError({ message }))))
}

/**
 * What hosts publish of a tool. Values reach `render` and `presentResult` from storage or the wire,
 * so they are decoded with the tool's value schema first; one that does not decode renders as text
 * and presents as its call.
 */
const descriptorOf = (tool: AnyAgentTool): AgentTools.Descriptor => {
  const decodeValue = Schema.decodeUnknownOption(tool.success)
  return {
    name: tool.name,
    description: tool.description,
    get parameters() {
      return tool.parameters.jsonSchema
    },
    success: tool.success,
    render: (value) => Option.match(decodeValue(value), { onNone: () => String(value), onSome: tool.render }),
    presentCall: tool.presentCall,
    presentResult: (args, value) =>
      Option.match(decodeValue(value), {
        onNone: () => tool.presentCall(args),
        onSome: (decoded) => tool.presentResult(args, decoded)
      })
  }
}

/**
 * The tools in the current scope, as a context with {@link AgentTools} and {@link CompletionNotices}.
 * With Tasks it attaches the task tools as the runtime's control surface until the scope closes.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (
  settings: Settings = {}
): Effect.Effect<Context.Context<AgentTools | CompletionNotices>, never, BashExecutor | BashEnvRegistry | Scope.Scope> =>
  Effect.gen(function*() {
    const executor = yield* BashExecutor
    const env = yield* BashEnvRegistry
    const tasks = yield* Effect.serviceOption(Tasks)
    const approval = yield* Effect.serviceOption(Approval)
    const persistence = yield* Effect.serviceOption(SessionPersistence)
    const sessions = yield* Effect.serviceOption(SandboxSessions)
    const terminals = yield* Effect.serviceOption(Terminals)
    const notices = new PendingNotices()
    const arrivals = yield* Effect.acquireRelease(PubSub.unbounded<string | undefined>(), PubSub.shutdown)
    if (Option.isSome(tasks)) {
      // The task tools are the runtime's control surface for as long as this layer lives, and this
      // layer is the one consumer of its completion notices.
      yield* tasks.value.attachSurface
      yield* Effect.forkScoped(
        Stream.runForEach(tasks.value.notifications, (notice) =>
          Effect.sync(() => notices.add(notice)).pipe(Effect.zipRight(PubSub.publish(arrivals, notice.owner))))
      )
    }

    const registered: Registered = {
      bash: makeBashTool({
        executor,
        env,
        tasks,
        approval,
        sessions,
        enableRunInBackground: settings.enableRunInBackground ?? true
      }),
      ...(Option.isSome(tasks)
        ? {
          task_output: makeTaskOutputTool(tasks.value),
          task_list: makeTaskListTool(tasks.value),
          task_kill: makeTaskKillTool(tasks.value)
        }
        : {}),
      ...(Option.isSome(terminals)
        ? makeTerminalTools({
          terminals: terminals.value,
          env,
          tasks,
          enableRunInBackground: settings.enableRunInBackground ?? true
        })
        : {})
    }
    const byName = (name: string): AnyAgentTool | undefined =>
      Object.hasOwn(registered, name) ? registered[name as AgentTools.Name] : undefined

    const record = (name: string, args: unknown, call: AgentTools.CallContext, result: AgentTools.Result) => {
      if (Option.isNone(persistence) || call.session === undefined) return Effect.void
      return persistence.value.record({
        session: call.session,
        callId: call.callId,
        toolName: name,
        arguments: args,
        isError: result.isError,
        result: result.isError ? { message: result.message } : result.value,
        text: result.text
      }).pipe(
        // The call has happened; a storage fault must not turn its result into an error.
        Effect.catchAll((error) => Effect.logWarning(`could not record tool call ${call.callId}: ${error.message}`))
      )
    }

    // Decodes the arguments, runs the tool and renders its value: the result of any call, typed by the
    // tool's value. A defect anywhere in the tool (its render included) is an internal error result.
    const answer = <Args, Value>(
      name: string,
      tool: AgentTool<Args, Value> | undefined,
      args: unknown,
      context: AgentTools.CallContext
    ): Effect.Effect<AgentTools.Result<Value>> =>
      Effect.gen(function*() {
        const outcome = yield* Effect.either(
          tool === undefined
            ? Effect.fail(new ToolError({ message: `unknown tool "${name}"` }))
            : tool.parameters.decode(args).pipe(
              Effect.flatMap((checked) => tool.handle(checked, context)),
              Effect.map((value) => ({ value, text: tool.render(value), shown: tool.finalTask?.(value) })),
              Effect.catchAllDefect(internalError(name)),
              // An interrupted call is an aborted one: recorded as the error its host answers with.
              Effect.onInterrupt(() => record(name, args, context, abortedCallResult))
            )
        )
        const result: AgentTools.Result<Value> = Either.match(outcome, {
          onLeft: (error) => ({ isError: true, message: error.message, text: `Error: ${error.message}` }),
          onRight: ({ text, value }) => ({ isError: false, value, text })
        })
        if (Either.isRight(outcome) && outcome.right.shown !== undefined) notices.seen(outcome.right.shown)
        yield* record(name, args, context, result)
        return result
      })
    // A span only when a tracer is installed: see `whenTraced`.
    const respond: <Args, Value>(
      name: string,
      tool: AgentTool<Args, Value> | undefined,
      args: unknown,
      context: AgentTools.CallContext
    ) => Effect.Effect<AgentTools.Result<Value>> = whenTraced(
      (name, tool, args, context) =>
        Effect.withSpan(answer(name, tool, args, context), "AgentTools.call", {
          attributes: { "tool.name": name, "tool.callId": context.callId }
        }),
      answer
    )

    const agentTools: AgentTools["Type"] = {
      tools: Object.values(registered).filter((tool) => tool !== undefined).map(descriptorOf),
      promptSections: [
        BashTool.promptSection,
        ...(executor.container === undefined ? [] : [containerSection(executor.container)]),
        ...(executor.network === undefined ? [] : [networkSection(executor.network, Option.isSome(approval))]),
        ...(Option.isSome(terminals) ? [terminalPromptSection] : [])
      ],
      call: (name, args, context) => respond(name, registered[name], args, context),
      callUnknown: (name, args, context) => respond(name, byName(name), args, context),
      takeNotices: (session) => Effect.sync(() => notices.take(session).map((notice) => notice.text))
    }
    return Context.make(AgentTools, agentTools).pipe(
      Context.add(CompletionNotices, {
        arrivals: Stream.fromPubSub(arrivals),
        take: (session) => Effect.sync(() => notices.take(session)).pipe(Effect.withSpan("CompletionNotices.take"))
      })
    )
  })

/**
 * The live tools. Needs a {@link BashExecutor} and a {@link BashEnvRegistry}; uses {@link Tasks},
 * {@link Approval}, {@link SandboxSessions}, {@link SessionPersistence} and {@link Terminals} when
 * they are in the context. Also provides {@link CompletionNotices}, the same notices for a host that delivers them
 * unprompted.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (
  settings: Settings = {}
): Layer.Layer<AgentTools | CompletionNotices, never, BashExecutor | BashEnvRegistry> =>
  Layer.scopedContext(make(settings))
