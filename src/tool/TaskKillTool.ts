/**
 * The `task_kill` tool: stop a background task of the calling session.
 *
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"
import { echoValue } from "../services/internal/requestChecks.js"
import * as AgentTool from "./AgentTool.js"
import { finalTask, taskCards, taskId, TaskSnapshot } from "./taskTools.js"
import { renderTaskKill } from "./taskTexts.js"

const fields = {
  task_id: taskId,
  reason: AgentTool.optional(
    AgentTool.expecting(
      Schema.String,
      "Why the task is being stopped (optional).",
      (actual) => `invalid reason: expected a string, got ${echoValue(actual)}`
    )
  )
}

/**
 * `{ task_id, reason? }`.
 *
 * @since 0.1.0
 * @category models
 */
export type Parameters = Schema.Struct.Type<typeof fields>

/**
 * The parameters, checked in order: task_id, reason.
 *
 * @since 0.1.0
 * @category constants
 */
export const parameters = AgentTool.parameters(fields)

/**
 * Whether the kill was requested or the task had already finished, and the task after it.
 *
 * @since 0.1.0
 * @category schemas
 */
export const Value = Schema.Struct({ outcome: Schema.Literal("requested", "already-finished"), task: TaskSnapshot })

/**
 * @since 0.1.0
 * @category models
 */
export type Value = typeof Value.Type

/**
 * `requested cancellation of task <id>`, or `task <id> had already finished <status line>`.
 *
 * @since 0.1.0
 * @category utils
 */
export const render = (value: Value): string => renderTaskKill(value.outcome, value.task)

/**
 * The `task_kill` tool's definition; the caller is the calling session.
 *
 * @since 0.1.0
 * @category constructors
 */
export const definition: AgentTool.Definition<Parameters, Value> = {
  name: "task_kill",
  description: "Stops a running background task. Read what it printed with `task_output` afterwards.",
  parameters,
  success: Value,
  render,
  ...taskCards((id) => `Stop task ${id}`, render),
  finalTask
}
