/**
 * One-shot sandbox escalation: strictly wider than the call's current mode, approved
 * by the user before anything runs, for this call only.
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type { Approval } from "../services/Approval.js"
import type { BashExecutor } from "../services/BashExecutor.js"
import type { ToolSession } from "../services/ToolExecution.js"
import { ToolError } from "../services/AgentTools.js"
import type { EscalationRequest } from "./internal/bashParameters.js"

const breadth: Readonly<Record<BashExecutor.SandboxMode, number>> = {
  "read-only": 0,
  "workspace-write": 1,
  "danger-full-access": 2
}

/**
 * Whether `target` grants more than `current`.
 */
const isStrictlyWider = (target: BashExecutor.SandboxMode, current: BashExecutor.SandboxMode): boolean =>
  breadth[target] > breadth[current]

/**
 * The call an escalation is for.
 */
export interface EscalationCall {
  readonly escalation: EscalationRequest
  /** The mode the call would run under without the escalation. */
  readonly current: BashExecutor.SandboxMode
  readonly command: string
  readonly callId: string
  readonly session: ToolSession | undefined
  /** Where and how the command would run, resolved, for the question. */
  readonly workdir: string
  readonly background: boolean
  /** The foreground time limit; absent for a background task. */
  readonly timeoutMs?: number | undefined
}

const refusal = (mode: BashExecutor.SandboxMode, outcome: Exclude<Approval.Outcome, "allowed-once">): string => {
  switch (outcome) {
    case "rejected":
      return `the user rejected escalating this command to "${mode}"`
    case "cancelled":
      return `approval for escalating to "${mode}" was cancelled`
    case "unavailable":
      return `sandbox escalation to "${mode}" requires approval, but no approval channel is available`
  }
}

/**
 * The mode granted for this one call, or the exact refusal. A mode that is not strictly wider fails
 * without asking anyone.
 */
export const approveEscalation = Effect.fn("bash.approveEscalation")(function*(
  approval: Option.Option<Approval["Type"]>,
  call: EscalationCall
) {
  const { justification, mode } = call.escalation
  yield* Effect.annotateCurrentSpan({ "sandbox.current": call.current, "sandbox.requested": mode })
  if (!isStrictlyWider(mode, call.current)) {
    return yield* new ToolError({
      message: `sandbox escalation to "${mode}" is not strictly wider than this call's current "${call.current}" mode`
    })
  }
  if (Option.isNone(approval)) {
    return yield* new ToolError({
      message: `sandbox escalation to "${mode}" requires approval, but no approval service is composed`
    })
  }
  const outcome = yield* approval.value.request({
    ...(call.session !== undefined ? { session: call.session } : {}),
    toolName: "bash",
    callId: call.callId,
    reason: justification,
    command: call.command,
    mode,
    workdir: call.workdir,
    background: call.background,
    ...(call.background || call.timeoutMs === undefined ? {} : { timeoutMs: call.timeoutMs })
  })
  yield* Effect.annotateCurrentSpan({ "approval.outcome": outcome })
  return outcome === "allowed-once" ? mode : yield* new ToolError({ message: refusal(mode, outcome) })
})
