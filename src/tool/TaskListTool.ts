/**
 * The `task_list` tool: the calling session's background tasks, one line each.
 *
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"
import * as AgentTool from "./AgentTool.js"
import { taskCards, TaskSnapshot } from "./taskTools.js"
import { renderTaskList } from "./taskTexts.js"

const fields = {}

/**
 * `{}`: no parameters.
 *
 * @since 0.1.0
 * @category models
 */
export type Parameters = Schema.Struct.Type<typeof fields>

/**
 * The parameters: none; whatever is sent is ignored.
 *
 * @since 0.1.0
 * @category constants
 */
export const parameters = AgentTool.parameters(fields)

/**
 * The tasks the calling session may see.
 *
 * @since 0.1.0
 * @category schemas
 */
export const Value = Schema.Struct({ tasks: Schema.Array(TaskSnapshot) })

/**
 * @since 0.1.0
 * @category models
 */
export type Value = typeof Value.Type

/**
 * `(no background tasks)` or one `<id> [<kind>] <status> — <label>` line per task.
 *
 * @since 0.1.0
 * @category utils
 */
export const render = (value: Value): string => renderTaskList(value.tasks)

/**
 * The `task_list` tool's definition; the caller is the calling session.
 *
 * @since 0.1.0
 * @category constructors
 */
export const definition: AgentTool.Definition<Parameters, Value> = {
  name: "task_list",
  description: "Lists the background tasks of this session, one per line: id, kind, status and label.",
  parameters,
  success: Value,
  render,
  ...taskCards(() => "List background tasks", render)
}
