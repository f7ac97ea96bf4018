/**
 * The `task_output` tool: a background task's new output and its status line, after an
 * optional bounded wait for it to finish.
 *
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"
import { echoValue } from "../services/internal/requestChecks.js"
import { InvalidWaitTimeoutError } from "../services/Tasks.js"
import * as AgentTool from "./AgentTool.js"
import { finalTask, taskCards, taskId, TaskSnapshot } from "./taskTools.js"
import { renderTaskOutput } from "./taskTexts.js"

/**
 * The wait when `timeout_ms` is not given, in milliseconds.
 *
 * @since 0.1.0
 * @category constants
 */
export const defaultWaitMs = 30_000

/**
 * The cap on a wait, in milliseconds.
 *
 * @since 0.1.0
 * @category constants
 */
export const maxWaitMs = 600_000

const timeoutMessage = (actual: unknown) => new InvalidWaitTimeoutError({ value: actual }).message

const fields = {
  task_id: taskId,
  wait: AgentTool.optional(
    AgentTool.expecting(
      Schema.Boolean,
      "Wait for the task to finish before reading (default true: up to `timeout_ms`, 30000 ms unless given).",
      (actual) => `invalid wait: expected a boolean, got ${echoValue(actual)}`
    )
  ),
  timeout_ms: AgentTool.optional(
    AgentTool.expecting(
      Schema.Number,
      "How long to wait, in milliseconds (default 30000, at most 600000). The task keeps running " +
        "when the wait ends.",
      timeoutMessage
    ).pipe(Schema.filter((ms) => AgentTool.isPositive(ms) || timeoutMessage(ms)))
  )
}

/**
 * The arguments of a `task_output` call. The names are the reference's: `timeout_ms` is snake case
 * here, while `bash` takes `timeoutMs`.
 *
 * @since 0.1.0
 * @category models
 */
export interface Parameters {
  /** The task id, as returned when the task started (`bash-1`). */
  readonly task_id: string
  /**
   * Wait for the task to finish before reading. Defaults to `true`: the call then waits until the task
   * finishes or `timeout_ms` passes (30 s unless given); a task still running keeps running. `false`
   * reads at once.
   */
  readonly wait?: boolean
  /**
   * How long a wait lasts at most, in milliseconds: {@link defaultWaitMs} (30000) unless given, capped
   * at {@link maxWaitMs} (600000).
   */
  readonly timeout_ms?: number
}

/**
 * The parameters, checked in order: task_id, wait, timeout_ms.
 *
 * @since 0.1.0
 * @category constructors
 */
export const parameters: AgentTool.Parameters<AgentTool.Exactly<Parameters, Schema.Struct.Type<typeof fields>>> =
  AgentTool.parameters(fields)

/**
 * The new output and the snapshot taken after reading it.
 *
 * @since 0.1.0
 * @category schemas
 */
export const Value = Schema.Struct({ output: Schema.String, task: TaskSnapshot })

/**
 * @since 0.1.0
 * @category models
 */
export type Value = typeof Value.Type

/**
 * The new output or `(no new output)`, a newline if missing, then the status line.
 *
 * @since 0.1.0
 * @category utils
 */
export const render = (value: Value): string => renderTaskOutput(value.output, value.task)

/**
 * The `task_output` tool's definition; the caller is the calling session. `wait` defaults to true;
 * the wait is `timeout_ms` (default {@link defaultWaitMs}) capped at {@link maxWaitMs}.
 *
 * @since 0.1.0
 * @category constructors
 */
export const definition: AgentTool.Definition<Parameters, Value> = {
  name: "task_output",
  description: "Returns the output a background task produced since you last read it, then its status line " +
    "(`[status: running]`, `[status: completed, exit code: 0]`, …). By default it first waits until the task " +
    "finishes or `timeout_ms` passes; set `wait: false` to read at once.",
  parameters,
  success: Value,
  render,
  ...taskCards((id) => `Read output of task ${id}`, render),
  finalTask
}
