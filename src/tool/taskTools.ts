/**
 * The task tools over the generic task runtime (CONTRACT §3): `task_output`, `task_list`,
 * `task_kill`. The caller is the calling session; the runtime enforces isolation.
 *
 * @since 0.1.0
 */
import { Effect, Either } from "effect"
import type { TaskSnapshot, Tasks } from "../services/Tasks.js"
import type { ToolCallContext } from "./AgentTools.js"
import { ToolError } from "./AgentTools.js"
import { taskToolDescriptions } from "./descriptions.js"
import { presentTaskCall, presentTaskResult } from "./presentation.js"
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
  readonly task: TaskSnapshot
}

/**
 * The value of `task_list`.
 *
 * @since 0.1.0
 */
export interface TaskListValue {
  readonly tasks: ReadonlyArray<TaskSnapshot>
}

/**
 * The value of `task_kill`.
 *
 * @since 0.1.0
 */
export interface TaskKillValue {
  readonly outcome: "requested" | "already-finished"
  readonly task: TaskSnapshot
}

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
    {
      descriptor: {
        name: "task_output",
        description: taskToolDescriptions.task_output,
        parameters: parametersOf(taskOutputFields),
        render: (value) => {
          const { output, task } = value as TaskOutputValue
          return renderTaskOutput(output, task)
        },
        presentCall: (args) => presentTaskCall("task_output", args),
        presentResult: (args, value) => {
          const { output, task } = value as TaskOutputValue
          return presentTaskResult("task_output", args, renderTaskOutput(output, task))
        }
      },
      run: taskOutput
    },
    {
      descriptor: {
        name: "task_list",
        description: taskToolDescriptions.task_list,
        parameters: parametersOf(taskListFields),
        render: (value) => renderTaskList((value as TaskListValue).tasks),
        presentCall: (args) => presentTaskCall("task_list", args),
        presentResult: (args, value) => presentTaskResult("task_list", args, renderTaskList((value as TaskListValue).tasks))
      },
      run: taskList
    },
    {
      descriptor: {
        name: "task_kill",
        description: taskToolDescriptions.task_kill,
        parameters: parametersOf(taskKillFields),
        render: (value) => {
          const { outcome, task } = value as TaskKillValue
          return renderTaskKill(outcome, task)
        },
        presentCall: (args) => presentTaskCall("task_kill", args),
        presentResult: (args, value) => {
          const { outcome, task } = value as TaskKillValue
          return presentTaskResult("task_kill", args, renderTaskKill(outcome, task))
        }
      },
      run: taskKill
    }
  ]
}
