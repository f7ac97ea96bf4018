/**
 * Asking the user for names beyond the executor's network allow-list (`network_access`): the entries
 * are checked, the user approves them for this call or for the session (which then keeps them, as
 * `SandboxSessions.allowNetwork` does), or the call fails with the exact refusal before anything runs.
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type { Approval } from "../services/Approval.js"
import { ToolError } from "../services/AgentTools.js"
import { parseEntry } from "../services/internal/networkEntry.js"
import type { SandboxSessions } from "../services/SandboxSessions.js"
import type { EscalationCall } from "./escalation.js"
import { networkApprovalTexts } from "./internal/networkApprovalTexts.js"

/** The call the names are for: where and how it would run, as an escalation's. */
export interface NetworkAccessCall extends Omit<EscalationCall, "escalation" | "current"> {
  readonly names: ReadonlyArray<string>
  readonly justification: string
}

/**
 * The names granted to this call (kept for the session too when the user says so), or the exact
 * refusal. A bad entry fails without asking anyone.
 */
export const approveNetworkAccess = Effect.fn("bash.approveNetworkAccess")(function*(
  approval: Option.Option<Approval["Type"]>,
  sessions: Option.Option<SandboxSessions["Type"]>,
  call: NetworkAccessCall
) {
  for (const [index, text] of call.names.entries()) {
    const problem = parseEntry(text)
    if (typeof problem === "string") return yield* new ToolError({ message: networkApprovalTexts.badEntry(index, text, problem) })
  }
  yield* Effect.annotateCurrentSpan({ "network.requested": call.names.length })
  if (Option.isNone(approval)) return yield* new ToolError({ message: networkApprovalTexts.noService(call.names) })
  const ask = approval.value.requestNetwork
  const outcome: Approval.NetworkOutcome = ask === undefined ? "unavailable" : yield* ask({
    ...(call.session !== undefined ? { session: call.session } : {}),
    toolName: "bash",
    callId: call.callId,
    reason: call.justification,
    command: call.command,
    names: call.names,
    workdir: call.workdir,
    background: call.background,
    ...(call.background || call.timeoutMs === undefined ? {} : { timeoutMs: call.timeoutMs })
  })
  yield* Effect.annotateCurrentSpan({ "approval.outcome": outcome })
  if (outcome !== "allowed-once" && outcome !== "allowed-for-session") {
    return yield* new ToolError({ message: networkApprovalTexts.refused(call.names, outcome) })
  }
  const session = call.session?.id
  if (outcome === "allowed-for-session" && session !== undefined && Option.isSome(sessions)) {
    const kept = yield* sessions.value.networkOf(session)
    yield* sessions.value.allowNetwork(session, [...kept, ...call.names.filter((name) => !kept.includes(name))]).pipe(
      Effect.mapError((error) => new ToolError({ message: error.message }))
    )
  }
  return call.names
})
