/**
 * The `tool:bash` prompt text of a host that delivers completion notices to its agents unprompted.
 *
 * @internal
 */
import { promptSection } from "../BashTool.js"

/**
 * What the `tool:bash` prompt section adds for an agent that completion notices reach unprompted;
 * only a host that delivers them may add it.
 *
 * @since 0.1.0
 * @category constants
 */
export const noticePromise = "When a background task you started finishes, you are told without asking: a message " +
  "`background task <id> (...) finished [status: ...]` arrives, so keep working meanwhile instead of polling task_output."

/**
 * The `tool:bash` prompt text, with {@link noticePromise} where completion notices are delivered.
 *
 * @since 0.1.0
 * @category utils
 */
export const promptText = (options: { readonly notices: boolean }): string =>
  options.notices ? `${promptSection.text} ${noticePromise}` : promptSection.text
