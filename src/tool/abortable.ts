/**
 * Aborting a tool call where a host cancels it with an `AbortSignal` (the Cordis and MCP edges).
 * Inside Effect an abort is interruption: interrupting a call's fiber kills its foreground command,
 * withdraws its approval prompt or ends its wait. Only at these edges does a signal become
 * interruption, and an interrupted call the error `command aborted`.
 *
 * @internal
 */
import { Effect } from "effect"
import type { AgentTools } from "../services/AgentTools.js"
import { awaitAbort } from "../services/awaitAbort.js"

/**
 * What a call that was aborted (interrupted) answers: the error `command aborted` (CONTRACT §2).
 */
export const abortedCallResult: AgentTools.Result = {
  isError: true,
  message: "command aborted",
  text: "Error: command aborted"
}

/**
 * Runs a tool call (`AgentTools.call`) until `signal` fires; then the call is interrupted and answers
 * {@link abortedCallResult} once its interruption is over (its command killed, its last progress
 * update delivered within the grace). A signal that has already fired runs nothing.
 */
export const abortOnSignal = <R>(
  call: Effect.Effect<AgentTools.Result, never, R>,
  signal: AbortSignal | undefined
): Effect.Effect<AgentTools.Result, never, R> => {
  if (signal === undefined) return call
  if (signal.aborted) return Effect.succeed(abortedCallResult)
  return Effect.raceFirst(call, Effect.as(awaitAbort(signal), abortedCallResult))
}
