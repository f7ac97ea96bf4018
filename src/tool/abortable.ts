/**
 * Aborting a tool call where a host cancels it with an `AbortSignal` (the Cordis and MCP edges).
 * Inside Effect an abort is interruption: interrupting a call's fiber kills its foreground command,
 * withdraws its approval prompt or ends its wait. Only at these edges does a signal become
 * interruption, and an interrupted call the error `command aborted`.
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import type { AgentTools } from "../services/AgentTools.js"

/**
 * What a call that was aborted (interrupted) answers: the error `command aborted`.
 */
export const abortedCallResult: AgentTools.Result = {
  isError: true,
  message: "command aborted",
  text: "Error: command aborted"
}

/**
 * Runs a tool call (`AgentTools.call`) until `signal` fires (the MCP edge; the Cordis runner does the
 * same on the call's own fiber, `CallRunner.runUntil`); then the call is interrupted and answers
 * {@link abortedCallResult} once its interruption is over (its command killed, its last progress
 * update delivered within the grace). A signal that has already fired runs nothing.
 */
export const abortOnSignal = <R>(
  call: Effect.Effect<AgentTools.Result, never, R>,
  signal: AbortSignal | undefined
): Effect.Effect<AgentTools.Result, never, R> => {
  if (signal === undefined) return call
  if (signal.aborted) return Effect.succeed(abortedCallResult)
  // The call in one child fiber, awaited together with the signal by listeners: no second fiber
  // waits on a signal that almost never fires. Interrupting the caller interrupts the call first.
  return Effect.uninterruptibleMask((restore) =>
    Effect.flatMap(Effect.fork(restore(call)), (fiber) =>
      restore(settled(fiber, signal)).pipe(Effect.onInterrupt(() => Fiber.interrupt(fiber))))
  )
}

/** The call's own result once its fiber is done, or — when `signal` fires first — the aborted result. */
const settled = (fiber: Fiber.RuntimeFiber<AgentTools.Result>, signal: AbortSignal) =>
  Effect.async<AgentTools.Result>((resume) => {
    const stop = () => {
      signal.removeEventListener("abort", onAbort)
      fiber.removeObserver(onExit)
    }
    const onAbort = () => {
      stop()
      resume(Effect.as(Fiber.interrupt(fiber), abortedCallResult))
    }
    const onExit = () => {
      stop()
      resume(Fiber.join(fiber))
    }
    if (signal.aborted) return onAbort()
    signal.addEventListener("abort", onAbort, { once: true })
    fiber.addObserver(onExit)
    return Effect.sync(stop)
  })
