/**
 * The `task_output` tool (CONTRACT §3): a background task's new output and its status line, after an
 * optional bounded wait for it to finish.
 *
 * @since 0.1.0
 */
import { Effect, Schema } from "effect"
import { echoValue } from "../services/internal/requestChecks.js"
import type { AgentTools } from "../services/AgentTools.js"
import type { Tasks } from "../services/Tasks.js"
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
      "Wait for the task to finish before reading (default true).",
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
 * `{ task_id, wait?, timeout_ms? }`.
 *
 * @since 0.1.0
 * @category models
 */
export type Parameters = Schema.Struct.Type<typeof fields>

/**
 * The parameters, checked in order: task_id, wait, timeout_ms.
 *
 * @since 0.1.0
 * @category constants
 */
export const parameters = AgentTool.parameters(fields)

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
 * The `task_output` tool over one task runtime; the caller is the calling session. `wait` defaults
 * to true; the wait is `timeout_ms` (default {@link defaultWaitMs}) capped at {@link maxWaitMs}.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (tasks: Tasks["Type"]): AgentTool.AgentTool<Parameters, Value> => ({
  name: "task_output",
  description: "Returns the output a background task produced since you last read it, then its status line " +
    "(`[status: running]`, `[status: completed, exit code: 0]`, …). By default it first waits until the task " +
    "finishes or `timeout_ms` passes; set `wait: false` to read at once.",
  parameters,
  success: Value,
  render,
  ...taskCards((id) => `Read output of task ${id}`, render),
  finalTask,
  handle: Effect.fn("task_output.execute")(function*(args: Parameters, call: AgentTools.CallContext) {
    const caller = call.session?.id
    const waitMs = args.wait === false ? undefined : Math.min(args.timeout_ms ?? defaultWaitMs, maxWaitMs)
    yield* Effect.annotateCurrentSpan({ "task.id": args.task_id, "task.waitMs": waitMs ?? 0 })
    // Interrupting the call ends only the wait, before anything is read, so no output is consumed unseen.
    if (waitMs !== undefined) yield* Effect.mapError(tasks.wait(args.task_id, waitMs, caller), AgentTool.failWith)
    const value: Value = yield* Effect.mapError(tasks.read(args.task_id, caller), AgentTool.failWith)
    return value
  })
})
