/**
 * CONTRACT §1 `resolve`, and the checks every `run`/`start` repeats on a spec: one implementation
 * for the local executor and the test doubles that stand in for it.
 *
 * @since 0.1.0
 */
import { Effect } from "effect"
import type { BashExecutor } from "../services/BashExecutor.js"
import { AbortedBeforeSpawnError, BashRequestError } from "../services/BashExecutor.js"
import { commandNulProblem, echoValue, workdirProblem } from "../services/requestChecks.js"
import type { LocalBashExecutorConfig } from "./executorSettings.js"

/**
 * The defaults a request is resolved against.
 *
 * @since 0.1.0
 */
export type ResolveDefaults = Pick<LocalBashExecutorConfig, "cwd" | "timeoutMs" | "maxTimeoutMs" | "maxOutputBytes">

const describe = (value: unknown): string => (typeof value === "number" ? String(value) : echoValue(value))

/**
 * `value` when it is a positive finite number, else an error naming `field`.
 *
 * @since 0.1.0
 */
export const positive = (field: string, value: unknown): Effect.Effect<number, BashRequestError> =>
  typeof value === "number" && Number.isFinite(value) && value > 0 ?
    Effect.succeed(value) :
    Effect.fail(
      new BashRequestError({ field, message: `invalid ${field}: expected a positive finite number, got ${describe(value)}` })
    )

/**
 * Fails naming `command` or `workdir` when the OS could not take it: a NUL byte, or a workdir longer
 * than the OS allows (so neither surfaces as a raw spawn error).
 *
 * @since 0.1.0
 */
export const checkCommandAndWorkdir = (
  spec: Pick<BashExecutor.Spec, "command" | "workdir">
): Effect.Effect<void, BashRequestError> => {
  const command = typeof spec.command === "string" ? commandNulProblem(spec.command) : undefined
  if (command !== undefined) return Effect.fail(new BashRequestError({ field: "command", message: command }))
  const workdir = typeof spec.workdir === "string" ? workdirProblem(spec.workdir) : undefined
  if (workdir !== undefined) return Effect.fail(new BashRequestError({ field: "workdir", message: workdir }))
  return Effect.void
}

/**
 * Fills `workdir`, `timeoutMs` (capped at `maxTimeoutMs`) and `stdoutMaxBytes`, copies every other
 * given field, and names the field of a given non-positive or non-finite number, or of a command or
 * workdir the OS could not take.
 *
 * @since 0.1.0
 */
export const resolveSpec = (
  defaults: ResolveDefaults,
  request: BashExecutor.Request
): Effect.Effect<BashExecutor.Spec, BashRequestError> =>
  Effect.gen(function*() {
    const requested = request.timeoutMs === undefined ?
      defaults.timeoutMs :
      yield* positive("timeoutMs", request.timeoutMs)
    const stdoutMaxBytes = request.stdoutMaxBytes === undefined ?
      defaults.maxOutputBytes :
      yield* positive("stdoutMaxBytes", request.stdoutMaxBytes)
    const spec: BashExecutor.Spec = {
      ...request,
      workdir: request.workdir ?? defaults.cwd ?? process.cwd(),
      timeoutMs: Math.min(requested, defaults.maxTimeoutMs),
      stdoutMaxBytes
    }
    yield* checkCommandAndWorkdir(spec)
    return spec
  })

/**
 * Fails with `aborted before spawn: <reason>` when the spec's abort trigger has already fired.
 *
 * @since 0.1.0
 */
export const refuseIfAborted = (spec: BashExecutor.Spec): Effect.Effect<void, AbortedBeforeSpawnError> => {
  const signal = spec.signal
  if (signal === undefined || !signal.aborted) return Effect.void
  const reason = signal.reason instanceof Error ? signal.reason.message : String(signal.reason ?? "aborted")
  return Effect.fail(new AbortedBeforeSpawnError({ reason }))
}
