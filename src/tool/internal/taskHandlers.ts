/**
 * The task tools' handlers over one task runtime, each paired with its tool's definition. The caller
 * of every call is its calling session.
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import type { AgentTools } from "../../services/AgentTools.js"
import type { Tasks } from "../../services/Tasks.js"
import * as AgentTool from "../AgentTool.js"
import * as TaskKillTool from "../TaskKillTool.js"
import * as TaskListTool from "../TaskListTool.js"
import * as TaskOutputTool from "../TaskOutputTool.js"

/** `task_output`: the wait (unless `wait: false`), then a consuming read. */
export const makeTaskOutputTool = (tasks: Tasks["Type"]) =>
  AgentTool.implement(
    TaskOutputTool.definition,
    Effect.fn("task_output.execute")(function*(args: TaskOutputTool.Parameters, call: AgentTools.CallContext) {
      const caller = call.session?.id
      const waitMs = args.wait === false
        ? undefined
        : Math.min(args.timeout_ms ?? TaskOutputTool.defaultWaitMs, TaskOutputTool.maxWaitMs)
      yield* Effect.annotateCurrentSpan({ "task.id": args.task_id, "task.waitMs": waitMs ?? 0 })
      // Interrupting the call ends only the wait, before anything is read, so no output is consumed unseen.
      if (waitMs !== undefined) yield* Effect.mapError(tasks.wait(args.task_id, waitMs, caller), AgentTool.failWith)
      const value: TaskOutputTool.Value = yield* Effect.mapError(tasks.read(args.task_id, caller), AgentTool.failWith)
      return value
    })
  )

/** `task_list`: the caller's tasks. */
export const makeTaskListTool = (tasks: Tasks["Type"]) =>
  AgentTool.implement(
    TaskListTool.definition,
    Effect.fn("task_list.execute")(function*(_args: TaskListTool.Parameters, call: AgentTools.CallContext) {
      const value: TaskListTool.Value = { tasks: yield* tasks.list(call.session?.id) }
      return value
    })
  )

/** `task_kill`: the cancellation request, then the task as it is now. */
export const makeTaskKillTool = (tasks: Tasks["Type"]) =>
  AgentTool.implement(
    TaskKillTool.definition,
    Effect.fn("task_kill.execute")(function*(args: TaskKillTool.Parameters, call: AgentTools.CallContext) {
      const caller = call.session?.id
      yield* Effect.annotateCurrentSpan({ "task.id": args.task_id })
      const outcome = yield* Effect.mapError(tasks.kill(args.task_id, caller), AgentTool.failWith)
      const task = yield* Effect.mapError(tasks.get(args.task_id, caller), AgentTool.failWith)
      // The already-finished answer shows the final status: the owner needs no completion notice.
      if (outcome === "already-finished") yield* tasks.markReported(args.task_id)
      const value: TaskKillTool.Value = { outcome, task }
      return value
    })
  )
