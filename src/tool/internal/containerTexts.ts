/**
 * The texts the `bash` tool's description and prompt take about where commands run: the `$DSH_*`
 * variables, and a container's image, network and shared directory.
 *
 * @internal
 */
import type { AgentTools } from "../../services/AgentTools.js"
import type { BashExecutor } from "../../services/BashExecutor.js"
import { containerAllowListText } from "./networkTexts.js"

/**
 * What the `$DSH_*` variables are, in one paragraph of the description.
 *
 * @since 0.2.0
 * @category constants
 */
export const managedVariables =
  "Every command also gets variables named `$DSH_*`, set by the agent harness (DSH), not by the user: " +
  "`$DSH_HOME` is the harness's home directory, `$DSH_SHELL` is `1` in a shell this tool started, " +
  "`$DSH_SESSION_ID` is the calling session's id, and plugins may add more (such as `$DSH_SESSION_JSONL`, " +
  "the file the session is recorded in); read them, do not set them."

const networkText = (network: BashExecutor.ContainerFacts["network"]): string =>
  network === "none"
    ? "no network (only a loopback interface, so nothing can be downloaded)"
    : network === "allow-list"
    ? containerAllowListText
    : "the container engine's default network"

/**
 * Where commands run, in one sentence for the model: a container of the image, its network, and the
 * one directory shared with the user's machine.
 *
 * @since 0.2.0
 * @category utils
 */
export const containerText = (container: BashExecutor.ContainerFacts): string =>
  `Commands of the bash tool run inside a Docker container of the image ${JSON.stringify(container.image)}, ` +
  `not on the user's machine, with ${networkText(container.network)}: only the programs that image ` +
  `provides are there. ${workspaceText(container)}`

const workspaceText = (container: BashExecutor.ContainerFacts): string =>
  container.workspaceKind === "volume"
    ? `The directory ${JSON.stringify(container.workspace)} holds the session's files, in the container's ` +
      "own volume, not on the user's machine: they last as long as the session's container, and the user " +
      "sees them only through this tool. The file a truncation marker names is on the user's machine, out " +
      "of a command's reach."
    : `The directory ${JSON.stringify(container.workspace)} is the user's, shared at the ` +
      "same path; a file written anywhere else stays in the container and is gone when the container is removed. " +
      "The file a truncation marker names is on the user's machine: a command sees it only under that directory."

/**
 * The `tool:bash:container` prompt section (order 106) of a composition whose commands run in
 * containers: where they run, what they can reach.
 *
 * @since 0.2.0
 * @category utils
 */
export const containerSection = (container: BashExecutor.ContainerFacts): AgentTools.PromptSection => ({
  name: "tool:bash:container",
  order: 106,
  text: containerText(container)
})
