/**
 * The `terminal_close` tool: close a terminal once every process of it is gone.
 *
 * @since 0.2.0
 */
import * as Schema from "effect/Schema"
import * as AgentTool from "./AgentTool.js"
import { executeCards, sessionId, sessionIdOf } from "./terminalShared.js"

const fields = { sessionId: sessionId("Terminal session id.") }

/**
 * `{ sessionId }`.
 *
 * @since 0.2.0
 * @category models
 */
export type Parameters = Schema.Struct.Type<typeof fields>

/**
 * The parameters: sessionId.
 *
 * @since 0.2.0
 * @category constants
 */
export const parameters = AgentTool.parameters(fields)

/**
 * Whether this call closed the terminal or found it closing already.
 *
 * @since 0.2.0
 * @category schemas
 */
export const Value = Schema.Struct({ sessionId: Schema.String, outcome: Schema.Literal("closed", "already-closing") })

/**
 * @since 0.2.0
 * @category models
 */
export type Value = typeof Value.Type

/**
 * `closed terminal session <id>`, or `terminal session <id> was already closing`.
 *
 * @since 0.2.0
 * @category utils
 */
export const render = (value: Value): string =>
  value.outcome === "closed"
    ? `closed terminal session ${value.sessionId}`
    : `terminal session ${value.sessionId} was already closing`

/**
 * The `terminal_close` tool's definition.
 *
 * @since 0.2.0
 * @category constructors
 */
export const definition: AgentTool.Definition<Parameters, Value> = {
  name: "terminal_close",
  description: "Close one persistent terminal and wait until its captured owned process tree is gone.",
  parameters,
  success: Value,
  render,
  ...executeCards((args) => `Close terminal ${sessionIdOf(args)}`, render)
}
