/**
 * Every text of asking the user for network names (`network_access` on the `bash` tool): what the
 * model reads of the parameter and of the prompt, the messages of a call that cannot ask, and the
 * question a human reads. One place, tested verbatim.
 *
 * @internal
 */
import type { Approval } from "../../services/Approval.js"
import { echoValue } from "../../services/internal/requestChecks.js"
import { runFacts, shownBounded, shownCommand, shownJustification, shownLimits } from "./approvalText.js"

/** The most names one call may ask for. */
export const maxNetworkNames = 16

/** The names as one phrase: `a.test`, `a.test and b.test`, `a.test, b.test and c.test`. */
const namesText = (names: ReadonlyArray<string>): string =>
  names.length <= 1 ? names.join("") : `${names.slice(0, -1).join(", ")} and ${names[names.length - 1]}`

/**
 * The texts, by what they are for.
 *
 * @since 0.2.0
 * @category constants
 */
export const networkApprovalTexts = {
  /** `network_access` in the tool's JSON Schema. */
  parameter:
    "Names this one command needs beyond the network allow-list (`host`, `*.domain` or an IP, each with an " +
    "optional `:port`), after a `[network: refused <name>:<port> — not in the allow-list]` line. Requires " +
    "`justification`; the user approves them for this call or for the session.",
  /** `justification` in the JSON Schema of a composition that offers `network_access`. */
  justification: (withEscalation: boolean): string =>
    `Required with ${withEscalation ? "`sandbox_permissions` or `network_access`" : "`network_access`"}: one sentence ` +
    "telling the user why this exact command needs the wider access.",
  /** The end of the `tool:bash:network` section when the user can be asked. */
  howToAsk:
    "Only after a refusal `not in the allow-list`, and only if the command needs that name, you may retry the " +
    "same command once, in the same turn, with `network_access` listing the names it needs and a one-sentence " +
    "`justification`; the user is asked to approve them, for that call or for the rest of the session. Never ask " +
    "for names up front or to be safe, never for a name on the deny-list, and if the user refuses, stop and tell " +
    "the user which name the command needed.",
  /** A value that is no list of names. */
  invalid: (actual: unknown): string =>
    `invalid network_access: expected a list of 1 to ${maxNetworkNames} host names, got ${echoValue(actual)}`,
  /** An entry that is none. */
  badEntry: (index: number, text: string, problem: string): string =>
    `invalid network_access: entry ${index} ${JSON.stringify(text)} ${problem}`,
  needsJustification: "invalid network_access: network_access requires a justification",
  /** `justification` without anything it justifies. */
  justificationAlone: (withEscalation: boolean): string =>
    `invalid justification: justification is only valid together with ${
      withEscalation ? "sandbox_permissions or network_access" : "network_access"
    }`,
  /** `network_access` where no allow-list can be widened. */
  unavailable: "network_access is not available in this composition (no allow-listed network to widen)",
  /** Why the call did not run, after asking. */
  refused: (names: ReadonlyArray<string>, outcome: Exclude<Approval.NetworkOutcome, "allowed-once" | "allowed-for-session">): string => {
    switch (outcome) {
      case "rejected":
        return `the user rejected network access to ${namesText(names)}`
      case "cancelled":
        return `approval for network access to ${namesText(names)} was cancelled`
      case "unavailable":
        return `network access to ${namesText(names)} requires approval, but no approval channel is available`
    }
  },
  /** No approval service at all. */
  noService: (names: ReadonlyArray<string>): string =>
    `network access to ${namesText(names)} requires approval, but no approval service is composed`,
  /** The question's first line, as a human reads it. */
  question: (names: ReadonlyArray<string>): string =>
    `Allow the bash tool's command to reach ${namesText(names)} beyond the network allow-list?`,
  /** The human's three answers. */
  choices: { once: "Allow for this command", session: "Allow for this session", reject: "Reject" },
  /** The MCP client's question: the names, the command, where and how it runs, the justification. */
  elicitation: (request: Approval.NetworkRequest): string =>
    [
      networkApprovalTexts.question(shownNames(request)),
      "",
      `Command: ${shownCommand(request)}`,
      ...runFacts(request).map(([label, value]) => `${label}: ${value}`),
      `Justification (from the model): ${shownJustification(request)}`,
      "",
      "Accept lets this command reach them (\"once\"), or every later command of the session too (\"session\"); " +
      "decline leaves the allow-list as it is and the command does not run."
    ].join("\n"),
  /** The terminal's question, ending where the answer is typed. */
  terminal: (request: Approval.NetworkRequest): string =>
    `effect-bash: network access is requested: ${shownJustification(request)}\n` +
    runFacts(request).map(([label, value]) => `  ${label.toLowerCase()}: ${value}\n`).join("") +
    `allow reaching ${namesText(shownNames(request))} for: ${shownCommand(request)}? [y = this command, s = this session, N = no] `
} as const

/** The names as a human reads them: every one escaped, all of them bounded together. */
const shownNames = (request: Approval.NetworkRequest): ReadonlyArray<string> => {
  const shown = request.names.map((name) => shownBounded(name, shownLimits.justification))
  return shown.join(", ").length <= shownLimits.command ? shown : [shownBounded(shown.join(", "), shownLimits.command)]
}
