/**
 * The task tools over the generic task runtime (CONTRACT §3): `task_output`, `task_list`,
 * `task_kill`. The caller is the calling session; the runtime enforces isolation.
 *
 * @since 0.1.0
 */
import { Effect, Either } from "effect"
import type { Tasks } from "../services/Tasks.js"
import type { ToolCallContext, ToolDescriptor } from "../services/AgentTools.js"
import { ToolError } from "../services/AgentTools.js"
import { taskToolDescriptions } from "./descriptions.js"
import { presentTaskCall, presentTaskResult } from "./presentation.js"
import type { LooseFields } from "./schemas.js"
import { parametersOf, taskKillFields, taskListFields, taskOutputFields } from "./schemas.js"
import { renderTaskKill, renderTaskList, renderTaskOutput } from "./taskTexts.js"
import type { ToolEntry } from "./ToolEntry.js"
import { validateTaskKillArgs, validateTaskOutputArgs } from "./validateTaskArgs.js"

/**
 * The value of `task_output`: the new output and the snapshot taken after reading it.
 *
 * @since 0.1.0
 */
export interface TaskOutputValue {
  readonly output: string
  readonly task: Tasks.Snapshot
}

/**
 * The value of `task_list`.
 *
 * @since 0.1.0
 */
export interface TaskListValue {
  readonly tasks: ReadonlyArray<Tasks.Snapshot>
}

/**
 * The value of `task_kill`.
 *
 * @since 0.1.0
 */
export interface TaskKillValue {
  readonly outcome: "requested" | "already-finished"
  readonly task: Tasks.Snapshot
}

const renderOutputValue = ({ output, task }: TaskOutputValue) => renderTaskOutput(output, task)
const renderListValue = ({ tasks }: TaskListValue) => renderTaskList(tasks)
const renderKillValue = ({ outcome, task }: TaskKillValue) => renderTaskKill(outcome, task)

// Cards carry the same text the model read, rendered from the stored value.
const descriptorOf = <V>(
  name: "task_output" | "task_list" | "task_kill",
  fields: LooseFields,
  renderValue: (value: V) => string
): ToolDescriptor => ({
  name,
  description: taskToolDescriptions[name],
  parameters: parametersOf(fields),
  render: (value) => renderValue(value as V),
  presentCall: (args) => presentTaskCall(name, args),
  presentResult: (args, value) => presentTaskResult(name, args, renderValue(value as V))
})

const invalid = (message: string) => new ToolError({ message })
const failWith = (error: { readonly message: string }) => new ToolError({ message: error.message })
const callerOf = (call: ToolCallContext): string | undefined => call.session?.id

/**
 * The three task tools over one task runtime.
 *
 * @since 0.1.0
 */
export const makeTaskTools = (tasks: Tasks["Type"]): ReadonlyArray<ToolEntry> => {
  const taskOutput = Effect.fn("task_output.execute")(function*(raw: unknown, call: ToolCallContext) {
    const { taskId, waitMs } = yield* Either.mapLeft(validateTaskOutputArgs(raw), invalid)
    const caller = callerOf(call)
    yield* Effect.annotateCurrentSpan({ "task.id": taskId, "task.waitMs": waitMs ?? 0 })
    // Interrupting the call ends only the wait, before anything is read, so no output is consumed unseen.
    if (waitMs !== undefined) yield* Effect.mapError(tasks.wait(taskId, waitMs, caller), failWith)
    const value: TaskOutputValue = yield* Effect.mapError(tasks.read(taskId, caller), failWith)
    return value
  })

  const taskList = Effect.fn("task_list.execute")(function*(_raw: unknown, call: ToolCallContext) {
    const value: TaskListValue = { tasks: yield* tasks.list(callerOf(call)) }
    return value
  })

  const taskKill = Effect.fn("task_kill.execute")(function*(raw: unknown, call: ToolCallContext) {
    const taskId = yield* Either.mapLeft(validateTaskKillArgs(raw), invalid)
    const caller = callerOf(call)
    yield* Effect.annotateCurrentSpan({ "task.id": taskId })
    const outcome = yield* Effect.mapError(tasks.kill(taskId, caller), failWith)
    const task = yield* Effect.mapError(tasks.get(taskId, caller), failWith)
    // The already-finished answer shows the final status: the owner needs no completion notice.
    if (outcome === "already-finished") yield* tasks.markReported(taskId)
    const value: TaskKillValue = { outcome, task }
    return value
  })

  return [
    { descriptor: descriptorOf("task_output", taskOutputFields, renderOutputValue), run: taskOutput },
    { descriptor: descriptorOf("task_list", taskListFields, renderListValue), run: taskList },
    { descriptor: descriptorOf("task_kill", taskKillFields, renderKillValue), run: taskKill }
  ]
}
