/**
 * Validation of the task tools' arguments (CONTRACT §3), with the exact messages.
 *
 * @since 0.1.0
 */
import { Either } from "effect"
import { InvalidWaitTimeoutError } from "../services/Tasks.js"
import { argumentRecord, isNonBlank, isPositiveNumber, quoted } from "./argChecks.js"

/**
 * Default `task_output` wait, in milliseconds.
 *
 * @since 0.1.0
 */
export const defaultWaitMs = 30_000

/**
 * The cap on a `task_output` wait, in milliseconds.
 *
 * @since 0.1.0
 */
export const maxWaitMs = 600_000

/**
 * Validated `task_output` arguments.
 *
 * @since 0.1.0
 */
export interface TaskOutputArgs {
  readonly taskId: string
  /** The bounded wait before reading, when the call waits. */
  readonly waitMs: number | undefined
}

const taskIdOf = (input: Readonly<Record<string, unknown>>): Either.Either<string, string> => {
  const id = input["task_id"]
  return isNonBlank(id)
    ? Either.right(id)
    : Either.left(`invalid task_id: expected a non-empty string, got ${quoted(id)}`)
}

/**
 * `task_output { task_id, wait?, timeout_ms? }`: `wait` defaults to true; the wait is `timeout_ms`
 * (default 30000) capped at 600000.
 *
 * @since 0.1.0
 */
export const validateTaskOutputArgs = (raw: unknown): Either.Either<TaskOutputArgs, string> => {
  const input = argumentRecord(raw)
  const wait = input["wait"]
  const timeout = input["timeout_ms"]
  return Either.flatMap(taskIdOf(input), (taskId) => {
    if (wait !== undefined && typeof wait !== "boolean") {
      return Either.left(`invalid wait: expected a boolean, got ${quoted(wait)}`)
    }
    if (timeout !== undefined && !isPositiveNumber(timeout)) {
      return Either.left(new InvalidWaitTimeoutError({ value: timeout }).message)
    }
    const waitMs = wait === false ? undefined : Math.min(timeout ?? defaultWaitMs, maxWaitMs)
    return Either.right({ taskId, waitMs })
  })
}

/**
 * `task_kill { task_id, reason? }`: the id; a given reason must be a string.
 *
 * @since 0.1.0
 */
export const validateTaskKillArgs = (raw: unknown): Either.Either<string, string> => {
  const input = argumentRecord(raw)
  const reason = input["reason"]
  return Either.flatMap(taskIdOf(input), (taskId) =>
    reason === undefined || typeof reason === "string"
      ? Either.right(taskId)
      : Either.left(`invalid reason: expected a string, got ${quoted(reason)}`))
}
