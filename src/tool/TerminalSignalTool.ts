/**
 * The `terminal_signal` tool: a signal to the foreground process group of a terminal.
 *
 * @since 0.2.0
 */
import * as Schema from "effect/Schema"
import { echoValue } from "../services/internal/requestChecks.js"
import * as AgentTool from "./AgentTool.js"
import { executeCards, sessionId, sessionIdOf } from "./terminalShared.js"

const signals = ["SIGINT", "SIGTERM", "SIGKILL", "SIGTSTP", "SIGHUP"] as const

const signalMessage = (actual: unknown) => `invalid signal: expected one of ${signals.join(", ")}, got ${echoValue(actual)}`

const fields = {
  sessionId: sessionId("Terminal session id."),
  signal: AgentTool.required(
    AgentTool.expecting(
      Schema.Literal(...signals),
      "Signal to deliver. Shell-targeted SIGKILL is rejected; use terminal_close.",
      signalMessage
    ),
    signalMessage
  )
}

/**
 * `{ sessionId, signal }`.
 *
 * @since 0.2.0
 * @category models
 */
export type Parameters = Schema.Struct.Type<typeof fields>

/**
 * The parameters, checked in order: sessionId, signal.
 *
 * @since 0.2.0
 * @category constants
 */
export const parameters = AgentTool.parameters(fields)

/**
 * The reference's outcome (`delivered`, the group it went to) and the signal delivered: the text is
 * rendered from the value alone, so a stored result renders without its arguments.
 *
 * @since 0.2.0
 * @category schemas
 */
export const Value = Schema.Struct({
  delivered: Schema.Literal(true),
  targetPgid: Schema.Number,
  signal: Schema.Literal(...signals)
})

/**
 * @since 0.2.0
 * @category models
 */
export type Value = typeof Value.Type

/**
 * `delivered <signal> to foreground process group <pgid>`.
 *
 * @since 0.2.0
 * @category utils
 */
export const render = (value: Value): string =>
  `delivered ${value.signal} to foreground process group ${value.targetPgid}`

/**
 * The `terminal_signal` tool's definition.
 *
 * @since 0.2.0
 * @category constructors
 */
export const definition: AgentTool.Definition<Parameters, Value> = {
  name: "terminal_signal",
  description: "Send an allowed signal to the current foreground process group of a persistent terminal.",
  parameters,
  success: Value,
  render,
  ...executeCards((args) => `Signal terminal ${sessionIdOf(args)}`, render)
}
