/**
 * The `bash` tool's handler: escalate, collect the managed environment, place, then run in the
 * foreground or start a background task; and the tool for one composition, its
 * definition with this handler.
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Option from "effect/Option"
import * as Scope from "effect/Scope"
import type { Approval } from "../../services/Approval.js"
import type { BashEnvRegistry } from "../../services/BashEnvRegistry.js"
import type { BashExecutor } from "../../services/BashExecutor.js"
import type { SandboxSessions } from "../../services/SandboxSessions.js"
import type { Tasks } from "../../services/Tasks.js"
import type { AgentTools } from "../../services/AgentTools.js"
import { ToolError } from "../../services/AgentTools.js"
import { whenTraced } from "../../services/internal/whenTraced.js"
import { reportProgress } from "../liveProgress.js"
import { bashTaskWork, taskLabel } from "../backgroundTask.js"
import * as AgentTool from "../AgentTool.js"
import * as BashTool from "../BashTool.js"
import { escalationOf } from "./bashParameters.js"
import type { EscalationRequest } from "./bashParameters.js"
import { approveEscalation } from "../escalation.js"
import { approveNetworkAccess } from "../networkAccess.js"
import { placeCall } from "../placement.js"

/** The message for a background call when no task runtime is composed. */
const noTaskRuntimeMessage =
  "background tasks unavailable: compose a Tasks layer (TasksLive) with AgentToolsLive, which attaches the task tools"

/** Checked arguments, with the escalation they ask for. */
type BashArgs = BashTool.Parameters & { readonly escalation?: EscalationRequest }

const lastUpdateGrace = "1 second"

const failWith = (error: { readonly message: string }) => new ToolError({ message: error.message })

/** `request` that may also reach `names`: a sandbox's policy takes them, else the request itself. */
const withNames = (request: BashExecutor.Request, names: ReadonlyArray<string>): BashExecutor.Request =>
  names.length === 0
    ? request
    : request.sandboxPolicy !== undefined
    ? { ...request, sandboxPolicy: { ...request.sandboxPolicy, networkAllow: [...(request.sandboxPolicy.networkAllow ?? []), ...names] } }
    : { ...request, networkAllow: [...(request.networkAllow ?? []), ...names] }

/** What the tool runs against. */
export interface Dependencies {
  readonly executor: BashExecutor["Type"]
  readonly env: BashEnvRegistry["Type"]
  readonly tasks: Option.Option<Tasks["Type"]>
  readonly approval: Option.Option<Approval["Type"]>
  /** Standing per-session modes; without it every call starts from the executor's default. */
  readonly sessions: Option.Option<SandboxSessions["Type"]>
  readonly enableRunInBackground: boolean
}

/**
 * What the composition offers: `run_in_background` when background execution is enabled, sandbox
 * facts when the executor confines, and escalation only when an approval service can grant it.
 */
const policyOf = (deps: Dependencies): BashTool.Policy => {
  const sandbox = deps.executor.sandboxMode !== undefined
  return {
    background: deps.enableRunInBackground,
    sandbox,
    escalation: sandbox && Option.isSome(deps.approval),
    ...(deps.executor.container === undefined ? {} : { container: deps.executor.container }),
    ...(deps.executor.network !== undefined && Option.isSome(deps.approval) ? { networkApproval: true } : {})
  }
}

/** The `bash` tool for one composition. */
export const makeBashTool = (deps: Dependencies): AgentTool.AgentTool<BashTool.Parameters, BashTool.Value> => {
  const policy = policyOf(deps)
  return AgentTool.implement(BashTool.definition(policy), makeBashHandler(deps, policy))
}

/** Runs checked `bash` arguments in one composition. */
const makeBashHandler = (deps: Dependencies, policy: BashTool.Policy) => {
  const { env, executor } = deps
  const escalationOffered = policy.escalation

  /** Everything before the process starts: placement, approval, the managed environment, defaults. */
  const prepare = (args: BashArgs, call: AgentTools.CallContext, extra: Pick<BashExecutor.Request, "owner">) =>
    Effect.gen(function*() {
      // Mode order: an approved one-shot escalation, then the session's override, then the default.
      const standing = Option.isSome(deps.sessions)
        ? yield* deps.sessions.value.standingMode(call.session?.id)
        : executor.sandboxMode
      const escalation = standing === undefined ? undefined : args.escalation
      const networkAllow = Option.isSome(deps.sessions) ? yield* deps.sessions.value.networkOf(call.session?.id) : []
      const placement = yield* placeCall(executor, {
        workdir: args.workdir,
        session: call.session,
        mode: escalation?.mode ?? standing,
        networkAllow
      })
      const request: BashExecutor.Request = {
        command: args.command,
        ...placement,
        // Without a sandbox policy (a container), the session's names are the request's own.
        ...(placement.sandboxPolicy === undefined && networkAllow.length > 0 ? { networkAllow } : {}),
        ...(args.timeoutMs !== undefined ? { timeoutMs: args.timeoutMs } : {}),
        ...extra
      }
      const asking = (escalation !== undefined && standing !== undefined) || args.network_access !== undefined
      // Asked before anything runs, showing where and how the command would run (defaults filled in).
      const shown = asking ? yield* executor.resolve(request).pipe(Effect.mapError(failWith)) : undefined
      // What the user is shown of the call, whatever is asked.
      const asked = shown === undefined ? undefined : {
        command: args.command,
        callId: call.callId,
        session: call.session,
        workdir: shown.workdir,
        background: args.run_in_background === true,
        timeoutMs: shown.timeoutMs
      }
      if (escalation !== undefined && standing !== undefined && asked !== undefined) {
        yield* approveEscalation(deps.approval, { ...asked, escalation, current: standing })
      }
      const approved = args.network_access === undefined || args.justification === undefined || asked === undefined
        ? []
        : yield* approveNetworkAccess(deps.approval, deps.sessions, {
          ...asked,
          names: args.network_access,
          justification: args.justification
        })
      const dshEnv = yield* env.collect({
        callId: call.callId,
        toolName: "bash",
        ...(call.session !== undefined ? { session: call.session } : {})
      }).pipe(Effect.mapError(failWith))
      return yield* executor.resolve({ ...withNames(request, approved), dshEnv }).pipe(Effect.mapError(failWith))
    })

  // With a progress callback the run is watched. The reporter ends soon after the run has settled —
  // also when the call is interrupted: the run is killed first, so the last update shows the output
  // produced until then. A callback that blocks gets `lastUpdateGrace` to deliver it, never more.
  const runWatched = (spec: BashExecutor.Spec, onProgress: NonNullable<AgentTools.CallContext["onProgress"]>) =>
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

  const runForeground = (spec: BashExecutor.Spec, call: AgentTools.CallContext) =>
    (call.onProgress === undefined ? executor.run(spec) : runWatched(spec, call.onProgress)).pipe(
      Effect.mapError(failWith),
      Effect.map((result): BashTool.Value => ({ kind: "foreground", ...result }))
    )

  const startBackground = (tasks: Tasks["Type"], args: BashArgs, call: AgentTools.CallContext, spec: BashExecutor.Spec) => {
    const owner = call.session?.id
    return tasks.start(
      { kind: "bash", label: taskLabel(args.command), ...(owner !== undefined ? { owner } : {}) },
      () => executor.start(spec).pipe(Effect.flatMap((process) => bashTaskWork(process, escalationOffered)))
    ).pipe(
      Effect.mapError(failWith),
      Effect.map((task): BashTool.Value => ({ kind: "background", taskId: task.id }))
    )
  }

  const execute = function*(args: BashArgs, call: AgentTools.CallContext) {
    if (args.run_in_background !== true) return yield* runForeground(yield* prepare(args, call, {}), call)
    if (Option.isNone(deps.tasks)) return yield* new ToolError({ message: noTaskRuntimeMessage })
    const tasks = deps.tasks.value
    const owner = call.session?.id
    const spec = yield* prepare(args, call, owner !== undefined ? { owner } : {})
    // The process outlives the call: interrupting the call stops only the preparation, never a start.
    return yield* Effect.uninterruptible(startBackground(tasks, args, call, spec))
  }
  const withEscalation = (checked: BashTool.Parameters): BashArgs => {
    const escalation = escalationOf(checked)
    return escalation === undefined ? checked : { ...checked, escalation }
  }

  // The span (and its stack capture) only when a tracer is installed: see `whenTraced`.
  return whenTraced(
    Effect.fn("bash.execute")(function*(checked: BashTool.Parameters, call: AgentTools.CallContext) {
      const args = withEscalation(checked)
      yield* Effect.annotateCurrentSpan({
        "bash.callId": call.callId,
        "bash.background": args.run_in_background === true,
        "bash.escalation": args.escalation?.mode ?? "none"
      })
      return yield* execute(args, call)
    }),
    Effect.fnUntraced(function*(checked: BashTool.Parameters, call: AgentTools.CallContext) {
      return yield* execute(withEscalation(checked), call)
    })
  )
}
