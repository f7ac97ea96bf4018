/**
 * Ending the preparation of a call when its abort trigger fires.
 *
 * @since 0.1.0
 */
import { Effect } from "effect"
import { awaitAbort } from "../services/BashExecutor.js"
import { ToolError } from "../services/AgentTools.js"

/**
 * The error of an aborted call: `command aborted`.
 *
 * @since 0.1.0
 */
export const commandAborted = (): ToolError => new ToolError({ message: "command aborted" })

const whenAborted = (signal: AbortSignal): Effect.Effect<never, ToolError> =>
  Effect.zipRight(awaitAbort(signal), Effect.fail(commandAborted()))

/**
 * Runs `effect` unless `signal` fires first, in which case it is interrupted and the call fails with
 * `command aborted`. A signal already fired means `effect` never starts.
 *
 * @since 0.1.0
 */
export const abortable = <A, E, R>(
  effect: Effect.Effect<A, E, R>,
  signal: AbortSignal | undefined
): Effect.Effect<A, E | ToolError, R> => {
  if (signal === undefined) return effect
  if (signal.aborted) return Effect.fail(commandAborted())
  return Effect.raceFirst(effect, whenAborted(signal))
}
