/**
 * The `terminal_read` tool: a page of a terminal's retained output, without sending input.
 *
 * @since 0.2.0
 */
import * as Schema from "effect/Schema"
import { echoValue } from "../services/internal/requestChecks.js"
import * as AgentTool from "./AgentTool.js"
import { boundBody, executeCards, sessionId, sessionIdOf } from "./terminalShared.js"

const numberMessage = (key: string) => (actual: unknown) => `invalid ${key}: expected a number, got ${echoValue(actual)}`

const fields = {
  sessionId: sessionId("Terminal session id."),
  offset: AgentTool.optional(
    AgentTool.expecting(Schema.Number, "Newest-relative line offset (default 0).", numberMessage("offset"))
  ),
  count: AgentTool.optional(
    AgentTool.expecting(
      Schema.Number,
      "Requested line count (default 500; backend caps apply).",
      numberMessage("count")
    )
  )
}

/**
 * `{ sessionId, offset?, count? }`.
 *
 * @since 0.2.0
 * @category models
 */
export type Parameters = Schema.Struct.Type<typeof fields>

/**
 * The parameters, checked in order: sessionId, offset, count.
 *
 * @since 0.2.0
 * @category constants
 */
export const parameters = AgentTool.parameters(fields)

/**
 * A page of the scrollback (model text) and where it lies.
 *
 * @since 0.2.0
 * @category schemas
 */
export const Value = Schema.Struct({
  text: Schema.String,
  totalLines: Schema.Number,
  lineBegin: Schema.Number,
  lineEnd: Schema.Number,
  truncated: Schema.Boolean,
  /** When truncated: the file holding the terminal's whole transcript. */
  transcriptPath: Schema.optional(Schema.String)
})

/**
 * @since 0.2.0
 * @category models
 */
export type Value = typeof Value.Type

/**
 * The page, then `[lines: <begin>-<end> of <total>]`.
 *
 * @since 0.2.0
 * @category utils
 */
export const render = (value: Value): string =>
  boundBody(
    value.text || "(no retained output)",
    `\n[lines: ${value.lineBegin}-${value.lineEnd} of ${value.totalLines}]`,
    value.truncated,
    value.transcriptPath
  )

/**
 * The `terminal_read` tool's definition.
 *
 * @since 0.2.0
 * @category constructors
 */
export const definition: AgentTool.Definition<Parameters, Value> = {
  name: "terminal_read",
  description: "Read a bounded page of retained output from a persistent terminal without sending input.",
  parameters,
  success: Value,
  render,
  ...executeCards((args) => `Read terminal ${sessionIdOf(args)}`, render)
}
