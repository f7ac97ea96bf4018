/**
 * The live {@link AgentTools}: `bash` over the composed executor, plus the task tools when a task
 * runtime is composed. Approval, Tasks, SandboxSessions and SessionPersistence are optional; each call is recorded
 * when persistence is composed, so replays never parse text.
 *
 * @since 0.1.0
 */
import type { Scope } from "effect"
import { Cause, Context, Effect, Either, Layer, Option, PubSub, Stream } from "effect"
import { Approval } from "../services/Approval.js"
import { BashEnvRegistry } from "../services/BashEnvRegistry.js"
import { BashExecutor } from "../services/BashExecutor.js"
import { capEchoed } from "../services/requestChecks.js"
import { SandboxSessions } from "../services/SandboxSessions.js"
import { SessionPersistence } from "../services/SessionPersistence.js"
import { Tasks } from "../services/Tasks.js"
import type { ToolCallContext, ToolCallResult } from "../services/AgentTools.js"
import { AgentTools, ToolError } from "../services/AgentTools.js"
import { abortedCallResult } from "./abortable.js"
import { makeBashTool } from "./bashTool.js"
import { CompletionNotices } from "../services/CompletionNotices.js"
import { finalTaskShown, PendingNotices } from "./PendingNotices.js"
import { bashPromptSection } from "./descriptions.js"
import { makeTaskTools } from "./taskTools.js"
import type { ToolEntry } from "./ToolEntry.js"

/**
 * Settings of {@link AgentToolsLive.layer}.
 *
 * @since 0.1.0
 */
export interface AgentToolsLiveConfig {
  /** Offer `run_in_background` (default true); when false a forced background call is refused. */
  readonly enableRunInBackground?: boolean
}

// A bug in one tool must not end an agent's turn: the model gets an error result, the log the defect.
// The message is in the log line's text and the defect is its cause (logged as `{}`, an Error has no JSON).
const internalError = (name: string) => (defect: unknown) => {
  const message = `internal error in ${name}: ${capEchoed(defect instanceof Error ? defect.message : String(defect))}`
  return Effect.logError(message, Cause.die(defect)).pipe(Effect.zipRight(Effect.fail(new ToolError({ message }))))
}

const make = (
  config: AgentToolsLiveConfig
): Effect.Effect<Context.Context<AgentTools | CompletionNotices>, never, BashExecutor | BashEnvRegistry | Scope.Scope> =>
  Effect.gen(function*() {
    const executor = yield* BashExecutor
    const env = yield* BashEnvRegistry
    const tasks = yield* Effect.serviceOption(Tasks)
    const approval = yield* Effect.serviceOption(Approval)
    const persistence = yield* Effect.serviceOption(SessionPersistence)
    const sessions = yield* Effect.serviceOption(SandboxSessions)
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

    const entries: ReadonlyArray<ToolEntry> = [
      makeBashTool({
        executor,
        env,
        tasks,
        approval,
        sessions,
        enableRunInBackground: config.enableRunInBackground ?? true
      }),
      ...(Option.isSome(tasks) ? makeTaskTools(tasks.value) : [])
    ]
    const byName = new Map(entries.map((entry) => [entry.descriptor.name, entry]))

    const record = (name: string, args: unknown, call: ToolCallContext, result: ToolCallResult) => {
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

    const call = Effect.fn("AgentTools.call")(function*(name: string, args: unknown, context: ToolCallContext) {
      yield* Effect.annotateCurrentSpan({ "tool.name": name, "tool.callId": context.callId })
      const entry = byName.get(name)
      // An interrupted call is an aborted one: recorded as the error its host answers with.
      const outcome = entry === undefined
        ? Either.left(new ToolError({ message: `unknown tool "${name}"` }))
        : yield* Effect.either(entry.run(args, context).pipe(
          Effect.catchAllDefect(internalError(name)),
          Effect.onInterrupt(() => record(name, args, context, abortedCallResult))
        ))
      const result: ToolCallResult = Either.match(outcome, {
        onLeft: (error) => ({ isError: true, message: error.message, text: `Error: ${error.message}` }),
        onRight: (value) => ({ isError: false, value, text: entry?.descriptor.render(value) ?? "" })
      })
      const shown = result.isError ? undefined : finalTaskShown(result.value)
      if (shown !== undefined) notices.seen(shown)
      yield* record(name, args, context, result)
      return result
    })

    const execute = Effect.fn("AgentTools.execute")(function*(name: string, args: unknown, context: ToolCallContext) {
      const result = yield* call(name, args, context)
      return result.isError ? yield* new ToolError({ message: result.message }) : result.value
    })

    const agentTools: AgentTools["Type"] = {
      tools: entries.map((entry) => entry.descriptor),
      promptSections: [bashPromptSection],
      execute,
      call,
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
 * The live tools.
 *
 * @since 0.1.0
 */
export const AgentToolsLive = {
  /**
   * Needs a {@link BashExecutor} and a {@link BashEnvRegistry}; uses {@link Tasks}, {@link Approval}
   * and {@link SessionPersistence} when they are in the context. With Tasks it attaches the task
   * tools as the runtime's control surface for the layer's lifetime. Also provides
   * {@link CompletionNotices}, the same notices for a host that delivers them unprompted.
   */
  layer: (
    config: AgentToolsLiveConfig = {}
  ): Layer.Layer<AgentTools | CompletionNotices, never, BashExecutor | BashEnvRegistry> =>
    Layer.scopedContext(make(config))
} as const
