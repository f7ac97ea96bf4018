/**
 * The texts the `bash` tool's prompt takes about a sandbox's allow-listed network: what its commands
 * reach, and what a refusal line means.
 *
 * @internal
 */
import type { AgentTools } from "../../services/AgentTools.js"
import type { BashExecutor } from "../../services/BashExecutor.js"
import { networkApprovalTexts } from "./networkApprovalTexts.js"

/** A container's allow-listed network, in the sentence that says where commands run. */
export const containerAllowListText = "only a loopback interface and a proxy that admits the names listed below"

/**
 * What a sandbox's allow-listed network lets its commands reach, and what a refusal line means. */
export const allowListText = (network: BashExecutor.NetworkFacts): string =>
  `${refusalMeaning(network)}; tell the user which name the command needed.`

/** What is allowed and what a refusal line means, up to what the model should then do. */
const refusalMeaning = (network: BashExecutor.NetworkFacts): string =>
  "Sandboxed commands reach the network only through a proxy that admits these names: " +
  `${network.allow.join(", ")}${network.deny.length === 0 ? "" : ` (never ${network.deny.join(", ")})`}. ` +
  "Clients that honour HTTP_PROXY, HTTPS_PROXY and ALL_PROXY (curl, git over http(s), npm, pip) work unchanged; " +
  "DNS lookups, UDP and direct connections fail. `[network: refused <name>:<port> — <reason>]` at the end of a " +
  "result means the proxy refused that connection: a policy decision, not a fault of the command, so do not " +
  "look for another way around it"

/**
 * The `tool:bash:network` prompt section (order 107) of an executor with an allow-listed network;
 * with `approvable`, it says how to ask the user for a name (`network_access`).
 */
export const networkSection = (network: BashExecutor.NetworkFacts, approvable = false): AgentTools.PromptSection => ({
  name: "tool:bash:network",
  order: 107,
  text: approvable ? `${refusalMeaning(network)}. ${networkApprovalTexts.howToAsk}` : allowListText(network)
})
