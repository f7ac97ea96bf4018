/**
 * A background `bash` process as generic task work: rendered incremental output, the
 * cancel hook, and the outcome with its detail.
 */
import * as Effect from "effect/Effect"
import * as Ref from "effect/Ref"
import type { BashExecutor } from "../services/BashExecutor.js"
import type { Tasks } from "../services/Tasks.js"
import { renderBackgroundRead } from "./renderBackgroundRead.js"
import { sandboxNotices } from "./sandboxNotices.js"

/**
 * How a finished process ended, as a task outcome: `signal: SIG…` or `exit code: N` (a killed process
 * that trapped the signal and exited still has its code), else `killed before exit`.
 */
const bashTaskOutcome = (state: BashExecutor.ProcessState): Tasks.Outcome => {
  const detail = state.signal !== null
    ? `signal: ${state.signal}`
    : state.exitCode !== null
    ? `exit code: ${state.exitCode}`
    : undefined
  if (state.status === "killed") return { status: "killed", detail: detail ?? "killed before exit" }
  return detail === undefined ? { status: "completed" } : { status: "completed", detail }
}

/**
 * A short one-line label for a command: whitespace collapsed, at most 80 characters.
 */
export const taskLabel = (command: string): string => {
  const line = command.trim().replace(/\s+/g, " ")
  return line.length <= 80 ? line : `${line.slice(0, 79)}…`
}

/**
 * Adapts a started process. Reads render the delta, the lossy notice, and (once, after the process
 * has finished) its sandbox notices.
 */
export const bashTaskWork = (process: BashExecutor.Process, escalationOffered: boolean): Effect.Effect<Tasks.Work> =>
  Effect.map(Ref.make(false), (sandboxReported): Tasks.Work => ({
    read: Effect.gen(function*() {
      // The state is taken first: once it is final, this read holds everything the process wrote.
      const state = yield* process.state
      const read = yield* process.readOutput
      const notices = state.status === "running"
        ? []
        : [...(state.networkRefusals ?? []), ...sandboxNotices(state.sandbox, escalationOffered)]
      const fresh = notices.length > 0 && !(yield* Ref.getAndSet(sandboxReported, true))
      return renderBackgroundRead(read, fresh ? notices : [])
    }),
    cancel: Effect.asVoid(process.kill),
    done: Effect.map(process.done, bashTaskOutcome)
  }))
