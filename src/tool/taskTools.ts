/**
 * What the three task tools share: the `task_id` parameter, the task snapshot their values carry,
 * and their cards.
 */
import * as Schema from "effect/Schema"
import type { AgentTools } from "../services/AgentTools.js"
import { echoValue } from "../services/internal/requestChecks.js"
import type { Tasks } from "../services/Tasks.js"
import { isTerminalStatus } from "../services/Tasks.js"
import { expecting, isNonBlank, required } from "./AgentTool.js"

const taskIdMessage = (actual: unknown) => `invalid task_id: expected a non-empty string, got ${echoValue(actual)}`

/**
 * `task_id`: a non-empty id, `invalid task_id: expected a non-empty string, got <JSON>` otherwise.
 */
export const taskId = required(
  expecting(Schema.String, "The task id, as returned when the task started (e.g. `bash-1`).", taskIdMessage).pipe(
    Schema.filter((id) => isNonBlank(id) || taskIdMessage(id))
  ),
  taskIdMessage
)

/**
 * A task as a value shows it ({@link Tasks.Snapshot}); a stored value may lack the keys whose value
 * was `undefined`, and decodes all the same.
 */
export const TaskSnapshot = Schema.Struct({
  id: Schema.String,
  kind: Schema.String,
  label: Schema.String,
  owner: Schema.UndefinedOr(Schema.String),
  status: Schema.Literal("running", "stopping", "completed", "killed", "failed"),
  detail: Schema.UndefinedOr(Schema.String)
}) satisfies Schema.Schema<Tasks.Snapshot, any>

/**
 * The task of a value, when the value shows its final status.
 */
export const finalTask = (value: { readonly task: Tasks.Snapshot }): string | undefined =>
  isTerminalStatus(value.task.status) ? value.task.id : undefined

const taskIdOf = (args: unknown): string => {
  const id = typeof args === "object" && args !== null ? (args as Readonly<Record<string, unknown>>)["task_id"] : undefined
  return typeof id === "string" ? id : "?"
}

/**
 * A task tool's cards: an execute card titled from the stored arguments, and for the result the same
 * card with the text the model read as its detail.
 */
export const taskCards = <Value>(title: (taskId: string) => string, render: (value: Value) => string) => ({
  presentCall: (args: unknown): AgentTools.Presentation => ({ kind: "execute", title: title(taskIdOf(args)) }),
  presentResult: (args: unknown, value: Value): AgentTools.Presentation => ({
    kind: "execute",
    title: title(taskIdOf(args)),
    detail: render(value)
  })
})
