/**
 * The `terminal_list` tool: the calling session's terminals.
 *
 * @since 0.2.0
 */
import * as Schema from "effect/Schema"
import * as AgentTool from "./AgentTool.js"
import { boundBody, executeCards, renderStatus, Snapshot } from "./terminalShared.js"

const fields = {}

/**
 * No parameters.
 *
 * @since 0.2.0
 * @category models
 */
export type Parameters = Schema.Struct.Type<typeof fields>

/**
 * The (empty) parameters.
 *
 * @since 0.2.0
 * @category constants
 */
export const parameters = AgentTool.parameters(fields)

/**
 * The caller's terminals, oldest first (the reference's array of snapshots).
 *
 * @since 0.2.0
 * @category schemas
 */
export const Value = Schema.Array(Snapshot)

/**
 * @since 0.2.0
 * @category models
 */
export type Value = typeof Value.Type

/**
 * One line per terminal, `<id> (<name>) [<type>] <status> pid=<pid>`, or `(no terminal sessions)`.
 *
 * @since 0.2.0
 * @category utils
 */
export const render = (value: Value): string =>
  value.length === 0 ? "(no terminal sessions)" : boundBody(
    value.map((session) =>
      `${session.sessionId}${session.name === undefined ? "" : ` (${session.name})`} [${session.type}] ${
        renderStatus(session.status)
      } pid=${session.pid}`
    ).join("\n"),
    "",
    false
  )

/**
 * The `terminal_list` tool's definition.
 *
 * @since 0.2.0
 * @category constructors
 */
export const definition: AgentTool.Definition<Parameters, Value> = {
  name: "terminal_list",
  description: "List persistent terminal sessions owned by the current agent.",
  parameters,
  success: Value,
  render,
  ...executeCards(() => "List terminal sessions", render)
}
