/**
 * The `bash` tool: validate, escalate, place, collect the managed environment, then run in the
 * foreground or start a background task (CONTRACT §2, §4, §5).
 *
 * @since 0.1.0
 */
import { Effect, Either, Fiber, Option, Scope } from "effect"
import type { Approval } from "../services/Approval.js"
import type { BashEnvRegistry } from "../services/BashEnvRegistry.js"
import type { BashExecutor } from "../services/BashExecutor.js"
import type { SandboxSessions } from "../services/SandboxSessions.js"
import type { Tasks } from "../services/Tasks.js"
import type { ToolCallContext } from "../services/AgentTools.js"
import { ToolError } from "../services/AgentTools.js"
import { reportProgress } from "./liveProgress.js"
import { bashTaskWork, taskLabel } from "./backgroundTask.js"
import type { BashToolValue } from "./BashToolValue.js"
import { isBashToolValue } from "./BashToolValue.js"
import { bashDescription } from "./descriptions.js"
import { approveEscalation } from "./escalation.js"
import { placeCall } from "./placement.js"
import { presentBashCall, presentBashResult } from "./presentation.js"
import { renderBashValue } from "./renderBashResult.js"
import { bashFields, parametersOf } from "./schemas.js"
import type { ToolEntry } from "./ToolEntry.js"
import type { BashArgs } from "./validateBashArgs.js"
import { validateBashArgs } from "./validateBashArgs.js"

/**
 * The message for a background call when no task runtime is composed.
 *
 * @since 0.1.0
 */
export const noTaskRuntimeMessage =
  "background tasks unavailable: compose a Tasks layer (TasksLive) with AgentToolsLive, which attaches the task tools"

/**
 * What the `bash` tool runs against.
 *
 * @since 0.1.0
 */
export interface BashToolDeps {
  readonly executor: BashExecutor["Type"]
  readonly env: BashEnvRegistry["Type"]
  readonly tasks: Option.Option<Tasks["Type"]>
  readonly approval: Option.Option<Approval["Type"]>
  /** Standing per-session modes; without it every call starts from the executor's default. */
  readonly sessions: Option.Option<SandboxSessions["Type"]>
  readonly enableRunInBackground: boolean
}

const lastUpdateGrace = "1 second"

const failWith = (error: { readonly message: string }) => new ToolError({ message: error.message })

/**
 * The `bash` tool for one composition.
 *
 * @since 0.1.0
 */
export const makeBashTool = (deps: BashToolDeps): ToolEntry => {
  const { env, executor } = deps
  const policy = { background: deps.enableRunInBackground, sandbox: executor.sandboxMode !== undefined }
  const escalationOffered = policy.sandbox

  /** Everything before the process starts: approval, placement, the managed environment, defaults. */
  const prepare = (args: BashArgs, call: ToolCallContext, extra: Pick<BashExecutor.Request, "owner">) =>
    Effect.gen(function*() {
      // Mode order: an approved one-shot escalation, then the session's override, then the default.
      const standing = Option.isSome(deps.sessions)
        ? yield* deps.sessions.value.standingMode(call.session?.id)
        : executor.sandboxMode
      const mode = args.escalation === undefined || standing === undefined
        ? standing
        : yield* approveEscalation(deps.approval, {
          escalation: args.escalation,
          current: standing,
          command: args.command,
          callId: call.callId,
          session: call.session
        })
      const placement = yield* placeCall(executor, {
        workdir: args.workdir,
        session: call.session,
        mode
      })
      const dshEnv = yield* env.collect({
        callId: call.callId,
        toolName: "bash",
        ...(call.session !== undefined ? { session: call.session } : {})
      }).pipe(Effect.mapError(failWith))
      return yield* executor.resolve({
        command: args.command,
        ...placement,
        ...(args.timeoutMs !== undefined ? { timeoutMs: args.timeoutMs } : {}),
        dshEnv,
        ...extra
      }).pipe(Effect.mapError(failWith))
    })

  // With a progress callback the run is watched. The reporter ends soon after the run has settled —
  // also when the call is interrupted: the run is killed first, so the last update shows the output
  // produced until then. A callback that blocks gets `lastUpdateGrace` to deliver it, never more.
  const runWatched = (spec: BashExecutor.Spec, onProgress: NonNullable<ToolCallContext["onProgress"]>) =>
    Effect.acquireUseRelease(
      Effect.gen(function*() {
        const runScope = yield* Scope.make()
        const live = yield* Scope.extend(executor.runStreaming(spec), runScope)
        // Not the call's child: interrupting the call must not interrupt the last update.
        const reporter = yield* Effect.forkDaemon(Effect.interruptible(reportProgress(live.output, onProgress)))
        return { runScope, live, reporter }
      }),
      ({ live }) => live.result,
      ({ reporter, runScope }, exit) =>
        Scope.close(runScope, exit).pipe(
          Effect.zipRight(Fiber.join(reporter).pipe(Effect.interruptible, Effect.timeoutOption(lastUpdateGrace))),
          Effect.zipRight(Fiber.interrupt(reporter))
        )
    )

  const runForeground = (spec: BashExecutor.Spec, call: ToolCallContext) =>
    (call.onProgress === undefined ? executor.run(spec) : runWatched(spec, call.onProgress)).pipe(
      Effect.mapError(failWith),
      Effect.map((result): BashToolValue => ({ kind: "foreground", ...result }))
    )

  const startBackground = (tasks: Tasks["Type"], args: BashArgs, call: ToolCallContext, spec: BashExecutor.Spec) => {
    const owner = call.session?.id
    return tasks.start(
      { kind: "bash", label: taskLabel(args.command), ...(owner !== undefined ? { owner } : {}) },
      () => executor.start(spec).pipe(Effect.flatMap((process) => bashTaskWork(process, escalationOffered)))
    ).pipe(
      Effect.mapError(failWith),
      Effect.map((task): BashToolValue => ({ kind: "background", taskId: task.id }))
    )
  }

  const run = Effect.fn("bash.execute")(function*(raw: unknown, call: ToolCallContext) {
    const args = yield* Either.mapLeft(validateBashArgs(raw, policy), (message) => new ToolError({ message }))
    yield* Effect.annotateCurrentSpan({
      "bash.callId": call.callId,
      "bash.background": args.runInBackground,
      "bash.escalation": args.escalation?.mode ?? "none"
    })
    if (!args.runInBackground) return yield* runForeground(yield* prepare(args, call, {}), call)
    if (Option.isNone(deps.tasks)) return yield* new ToolError({ message: noTaskRuntimeMessage })
    const tasks = deps.tasks.value
    const owner = call.session?.id
    const spec = yield* prepare(args, call, owner !== undefined ? { owner } : {})
    // The process outlives the call: interrupting the call stops only the preparation, never a start.
    return yield* Effect.uninterruptible(startBackground(tasks, args, call, spec))
  })

  return {
    descriptor: {
      name: "bash",
      description: bashDescription(policy),
      parameters: parametersOf(bashFields(policy)),
      render: (value) => isBashToolValue(value) ? renderBashValue(value, escalationOffered) : String(value),
      presentCall: presentBashCall,
      presentResult: presentBashResult
    },
    run
  }
}
