/**
 * The `terminal_open` tool: start a persistent shell owned by the calling session.
 *
 * @since 0.2.0
 */
import * as Schema from "effect/Schema"
import { echoValue } from "../services/internal/requestChecks.js"
import * as AgentTool from "./AgentTool.js"
import { boundWithPrefix, executeCards, Status, terminalText } from "./terminalShared.js"

const typeMessage = (actual: unknown) => `invalid type: expected a non-empty string, got ${echoValue(actual)}`
const stringMessage = (key: string) => (actual: unknown) => `invalid ${key}: expected a string, got ${echoValue(actual)}`

const fields = {
  type: AgentTool.required(
    // An empty type gets the reference tool's own text; a missing or non-string one our per-field message.
    AgentTool.expecting(Schema.String, "Registered terminal backend type, usually \"shell\".", typeMessage).pipe(
      Schema.filter((type) => AgentTool.isNonBlank(type) || "type must be a non-empty string")
    ),
    typeMessage
  ),
  name: AgentTool.optional(
    AgentTool.expecting(
      Schema.String,
      "Optional owner-local display name such as \"main\" or \"gdb\".",
      stringMessage("name")
    )
  ),
  cwd: AgentTool.optional(
    AgentTool.expecting(
      Schema.String,
      "Initial working directory. Defaults to the deployment workspace root.",
      stringMessage("cwd")
    )
  )
}

/**
 * `{ type, name?, cwd? }`.
 *
 * @since 0.2.0
 * @category models
 */
export type Parameters = Schema.Struct.Type<typeof fields>

/**
 * The parameters, checked in order: type, name, cwd.
 *
 * @since 0.2.0
 * @category constants
 */
export const parameters = AgentTool.parameters(fields)

/**
 * The opened terminal and what its shell printed until its first prompt (model text).
 *
 * @since 0.2.0
 * @category schemas
 */
export const Value = Schema.Struct({
  sessionId: Schema.String,
  name: Schema.optionalWith(Schema.String, { exact: true }),
  type: Schema.String,
  pid: Schema.Number,
  status: Status,
  motd: Schema.String
})

/**
 * @since 0.2.0
 * @category models
 */
export type Value = typeof Value.Type

/**
 * `started terminal session <id> [type: shell]`, then the startup output.
 *
 * @since 0.2.0
 * @category utils
 */
export const render = (value: Value): string => {
  const name = value.name === undefined ? value.sessionId : `${value.sessionId} (${value.name})`
  return boundWithPrefix(`started terminal session ${name} [type: ${value.type}]\n`, value.motd || "(no startup output)")
}

/**
 * The startup output of a shell as the model reads it.
 *
 * @since 0.2.0
 * @category utils
 */
export const motdOf = (raw: string): string => terminalText(raw, false)

const titleOf = (args: unknown): string => {
  const record = typeof args === "object" && args !== null ? (args as Readonly<Record<string, unknown>>) : {}
  const label = typeof record.name === "string" ? record.name : typeof record.type === "string" ? record.type : "?"
  return `Open terminal ${label}`
}

/**
 * The `terminal_open` tool's definition; the owner is the calling session.
 *
 * @since 0.2.0
 * @category constructors
 */
export const definition: AgentTool.Definition<Parameters, Value> = {
  name: "terminal_open",
  description:
    "Create a persistent, owner-isolated terminal session from a registered backend type. Use this for shell or REPL state that must survive across tool calls.",
  parameters,
  success: Value,
  render,
  ...executeCards(titleOf, render)
}
