/**
 * The `bash` tool's handler: escalate, place, collect the managed environment, then run in the
 * foreground or start a background task (CONTRACT §2, §4, §5).
 *
 * @internal
 */
import { Effect, Fiber, Option } from "effect"
import type { BashExecutor } from "../../services/BashExecutor.js"
import type { Tasks } from "../../services/Tasks.js"
import type { AgentTools } from "../../services/AgentTools.js"
import { ToolError } from "../../services/AgentTools.js"
import { abortable, commandAborted } from "../abortable.js"
import { reportProgress } from "../liveProgress.js"
import { bashTaskWork, taskLabel } from "../backgroundTask.js"
import type * as BashTool from "../BashTool.js"
import { escalationOf } from "../BashTool.js"
import { approveEscalation } from "../escalation.js"
import { placeCall } from "../placement.js"

/** The message for a background call when no task runtime is composed. */
export const noTaskRuntimeMessage =
  "background tasks unavailable: compose a Tasks layer (TasksLive) with AgentToolsLive, which attaches the task tools"

/** Checked arguments, with the escalation they ask for. */
type BashArgs = BashTool.Parameters & { readonly escalation?: BashTool.EscalationRequest }

const lastUpdateGrace = "1 second"

const failWith = (error: { readonly message: string }) => new ToolError({ message: error.message })

/** Infrastructure faults keep their message; an abort before spawn is the call's abort. */
const executorFault = (error: BashExecutor.RunError | BashExecutor.StartError): ToolError =>
  error._tag === "AbortedBeforeSpawnError" ? commandAborted() : failWith(error)

/** Runs checked `bash` arguments in one composition. */
export const makeBashHandler = (deps: BashTool.Dependencies, policy: BashTool.Policy) => {
  const { env, executor } = deps
  const escalationOffered = policy.sandbox

  /** Everything before the process starts: approval, placement, the managed environment, defaults. */
  const prepare = (args: BashArgs, call: AgentTools.CallContext, extra: Partial<BashExecutor.Request>) =>
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
        command: args.command,
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

  // With a progress callback the run is watched. The reporter ends soon after the run has settled;
  // a callback that blocks gets `lastUpdateGrace` to deliver the last update, never more.
  const runWatched = (spec: BashExecutor.Spec, onProgress: NonNullable<AgentTools.CallContext["onProgress"]>) =>
    Effect.scoped(Effect.gen(function*() {
      const live = yield* executor.runStreaming(spec)
      const reporter = yield* Effect.forkScoped(reportProgress(live.output, onProgress))
      const result = yield* live.result
      yield* Fiber.join(reporter).pipe(Effect.timeoutOption(lastUpdateGrace))
      return result
    }))

  const runForeground = (spec: BashExecutor.Spec, call: AgentTools.CallContext) =>
    (call.onProgress === undefined ? executor.run(spec) : runWatched(spec, call.onProgress)).pipe(
      Effect.mapError(executorFault),
      Effect.flatMap((result) =>
        result.aborted ? Effect.fail(commandAborted()) : Effect.succeed<BashTool.Value>({ kind: "foreground", ...result })
      )
    )

  const startBackground = (tasks: Tasks["Type"], args: BashArgs, call: AgentTools.CallContext, spec: BashExecutor.Spec) => {
    const owner = call.session?.id
    return tasks.start(
      { kind: "bash", label: taskLabel(args.command), ...(owner !== undefined ? { owner } : {}) },
      () => executor.start(spec).pipe(Effect.flatMap((process) => bashTaskWork(process, escalationOffered)))
    ).pipe(
      Effect.mapError((error) => error._tag === "TasksUnavailableError" ? failWith(error) : executorFault(error)),
      Effect.map((task): BashTool.Value => ({ kind: "background", taskId: task.id }))
    )
  }

  return Effect.fn("bash.execute")(function*(checked: BashTool.Parameters, call: AgentTools.CallContext) {
    const escalation = escalationOf(checked)
    const args: BashArgs = escalation === undefined ? checked : { ...checked, escalation }
    const runInBackground = args.run_in_background === true
    yield* Effect.annotateCurrentSpan({
      "bash.callId": call.callId,
      "bash.background": runInBackground,
      "bash.escalation": args.escalation?.mode ?? "none"
    })
    if (!runInBackground) {
      const spec = yield* abortable(
        prepare(args, call, call.signal !== undefined ? { signal: call.signal } : {}),
        call.signal
      )
      return yield* runForeground(spec, call)
    }
    if (Option.isNone(deps.tasks)) return yield* new ToolError({ message: noTaskRuntimeMessage })
    const tasks = deps.tasks.value
    // The process outlives the call: the call's abort trigger stops only the preparation.
    const owner = call.session?.id
    const spec = yield* abortable(prepare(args, call, owner !== undefined ? { owner } : {}), call.signal)
    return yield* startBackground(tasks, args, call, spec)
  })
}
