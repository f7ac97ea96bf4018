/**
 * The exact texts of the task tools and the completion notice.
 */
import type { Tasks } from "../services/Tasks.js"
import { appendLines } from "./appendLines.js"

/**
 * `[status: <s>]` or `[status: <s>, <detail>]`.
 */
export const statusLine = (task: Tasks.Snapshot): string =>
  task.detail === undefined ? `[status: ${task.status}]` : `[status: ${task.status}, ${task.detail}]`

/**
 * `task_output`: the new output or `(no new output)`, a newline if missing, then the status line.
 */
export const renderTaskOutput = (output: string, task: Tasks.Snapshot): string =>
  appendLines(output === "" ? "(no new output)" : output, [statusLine(task)])

/**
 * `task_list`: `(no background tasks)` or one `<id> [<kind>] <status> — <label>` line per task.
 */
export const renderTaskList = (tasks: ReadonlyArray<Tasks.Snapshot>): string =>
  tasks.length === 0
    ? "(no background tasks)"
    : tasks.map((task) => `${task.id} [${task.kind}] ${task.status} — ${task.label}`).join("\n")

/**
 * `task_kill`: `requested cancellation of task <id>`, or `task <id> had already finished <status line>`.
 */
export const renderTaskKill = (
  outcome: "requested" | "already-finished",
  task: Tasks.Snapshot
): string =>
  outcome === "requested"
    ? `requested cancellation of task ${task.id}`
    : `task ${task.id} had already finished ${statusLine(task)}`

/**
 * The completion notice a host injects for the owner:
 * `background task <id> (<kind>: <label>) finished <status line>. Read its output with task_output.`
 *
 * @since 0.1.0
 */
export const renderTaskNotice = (notice: Tasks.Notice): string => {
  const { task } = notice
  return `background task ${task.id} (${task.kind}: ${task.label}) finished ${statusLine(task)}. Read its output with task_output.`
}
