/**
 * The `terminal_send` tool: type into a terminal and wait until it is ready for more, or start the
 * send as a background task.
 *
 * @since 0.2.0
 */
import * as Schema from "effect/Schema"
import type { AgentTools } from "../services/AgentTools.js"
import { echoValue } from "../services/internal/requestChecks.js"
import * as AgentTool from "./AgentTool.js"
import { alternateScreenLine, boundBody, renderStatus, sessionId, sessionIdOf, Status } from "./terminalShared.js"

const booleanMessage = (key: string) => (actual: unknown) =>
  `invalid ${key}: expected a boolean, got ${echoValue(actual)}`
const textMessage = (actual: unknown) => `invalid text: expected a string, got ${echoValue(actual)}`

const fields = {
  sessionId: sessionId("Terminal session id returned by terminal_open or terminal_list."),
  text: AgentTool.required(
    AgentTool.expecting(Schema.String, "UTF-8 text to write to the terminal.", textMessage),
    textMessage
  ),
  submit: AgentTool.optional(
    AgentTool.expecting(
      Schema.Boolean,
      "Submit Enter after text (default true). Set false for control characters or incomplete REPL input.",
      booleanMessage("submit")
    )
  ),
  run_in_background: AgentTool.optional(
    AgentTool.expecting(
      Schema.Boolean,
      "Return a task id immediately; collect with task_output or stop with task_kill.",
      booleanMessage("run_in_background")
    )
  )
}

/**
 * `{ sessionId, text, submit?, run_in_background? }`.
 *
 * @since 0.2.0
 * @category models
 */
export type Parameters = Schema.Struct.Type<typeof fields>

/**
 * The message for a background send while background execution is disabled.
 *
 * @since 0.2.0
 * @category constants
 */
export const backgroundDisabledMessage = "background terminal sends are disabled for this deployment"

/**
 * The parameters, checked in order: sessionId, text, submit, run_in_background (unpublished, and
 * refused when true, without background tasks).
 *
 * @since 0.2.0
 * @category constructors
 */
export const parametersFor = (background: boolean): AgentTool.Parameters<Parameters> =>
  AgentTool.parameters({
    ...fields,
    run_in_background: background
      ? fields.run_in_background
      : AgentTool.unadvertised(backgroundDisabledMessage, (value) => value === true)
  }) as AgentTool.Parameters<Parameters>

/**
 * A settled send, with the reference's fields: the new output as model text (`viewport`), what
 * settled it, the terminal's status, whether older output was dropped; and ours: whether a
 * full-screen program holds the terminal, and the whole transcript's file.
 *
 * @since 0.2.0
 * @category schemas
 */
export const Foreground = Schema.Struct({
  kind: Schema.Literal("foreground"),
  viewport: Schema.String,
  waitReason: Schema.Literal("stdin_read", "inferred_idle", "timeout", "session_exit"),
  sessionStatus: Status,
  truncated: Schema.Boolean,
  screen: Schema.Literal("normal", "alternate"),
  /** When truncated: the file holding the terminal's whole transcript. */
  transcriptPath: Schema.optional(Schema.String)
})

/**
 * A send started as a background task.
 *
 * @since 0.2.0
 * @category schemas
 */
export const Background = Schema.Struct({ kind: Schema.Literal("background"), taskId: Schema.String })

/**
 * @since 0.2.0
 * @category schemas
 */
export const Value = Schema.Union(Foreground, Background)

/**
 * @since 0.2.0
 * @category models
 */
export type Value = typeof Value.Type

/**
 * The new output, then `[wait: <reason>]` and `[session: <status>]` (and, when older output was
 * dropped, `[output truncated]`, naming the whole transcript's file when there is one); or
 * `started background task <id>`.
 *
 * @since 0.2.0
 * @category utils
 */
export const render = (value: Value): string =>
  value.kind === "background"
    ? `started background task ${value.taskId}`
    : boundBody(
      value.viewport || "(no new output)",
      `${value.screen === "alternate" ? alternateScreenLine : ""}\n[wait: ${value.waitReason}]\n[session: ${
        renderStatus(value.sessionStatus)
      }]`,
      value.truncated,
      value.transcriptPath
    )

const textOf = (args: unknown): string => {
  const text = typeof args === "object" && args !== null ? (args as Readonly<Record<string, unknown>>).text : undefined
  return typeof text === "string" && text.length > 0 ? text : "(send input)"
}

const isBackground = (args: unknown): boolean =>
  typeof args === "object" && args !== null && (args as Readonly<Record<string, unknown>>).run_in_background === true

const presentCall = (args: unknown): AgentTools.Presentation =>
  isBackground(args)
    ? { kind: "execute", title: `Send to terminal ${sessionIdOf(args)} in background` }
    : { kind: "terminal", title: textOf(args), description: `Terminal ${sessionIdOf(args)}` }

/**
 * The `terminal_send` tool's definition; `background` offers `run_in_background`.
 *
 * @since 0.2.0
 * @category constructors
 */
export const definitionFor = (background: boolean): AgentTool.Definition<Parameters, Value> => ({
  name: "terminal_send",
  description:
    "Send text to a persistent terminal. By default Enter is submitted and the call waits for a prompt, stdin wait, output silence, timeout, or session exit." +
    (background ? " Background mode returns a task id for task_output/task_kill." : ""),
  parameters: parametersFor(background),
  success: Value,
  render,
  presentCall,
  presentResult: (args, value) =>
    value.kind === "background"
      ? { kind: "execute", title: `Send to terminal ${sessionIdOf(args)} in background`, detail: render(value) }
      : { kind: "terminal", title: textOf(args), description: `Terminal ${sessionIdOf(args)}`, output: render(value) }
})
