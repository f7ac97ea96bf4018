/**
 * The sandbox lines of a result: network refusals, a denial, the escalation hint, a runner failure.
 */
import type { BashExecutor } from "../services/BashExecutor.js"

/**
 * The exact escalation hint shown after a denial when the composition offers escalation.
 */
export const escalationHint =
  "[sandbox: escalation available — retry this exact command once with sandbox_permissions (the narrowest wider mode that suffices) + justification; the approval prompt asks the user]"

/**
 * The sandbox lines for one set of facts, in order. `escalationOffered` is true when the tool
 * advertises `sandbox_permissions`; the hint is shown only when a wider mode exists.
 */
export const sandboxNotices = (facts: BashExecutor.SandboxFacts | undefined, escalationOffered: boolean): ReadonlyArray<string> => {
  if (facts === undefined) return []
  if (facts.runnerFailed === true) {
    return [`[sandbox: the sandbox runner itself failed under ${facts.mode} mode — the command did not run; this is a sandbox problem, not a command failure]`]
  }
  const network = facts.networkRefusals ?? []
  if (!facts.denied) return network
  const denial = `[sandbox: file access denied under ${facts.mode} mode]`
  return [...network, ...(escalationOffered && facts.mode !== "danger-full-access" ? [denial, escalationHint] : [denial])]
}
