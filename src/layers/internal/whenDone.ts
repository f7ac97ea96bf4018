/**
 * A callback after an effect of the Clock (a sleep, a wait): for code that waits in Node callbacks
 * rather than in a fiber, yet keeps time by the runtime's Clock, so a TestClock drives it in tests.
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as FiberId from "effect/FiberId"
import * as Runtime from "effect/Runtime"

/**
 * Runs `effect` on a fiber of `runtime`, calling `done` when it succeeds; returns what interrupts it
 * (after which `done` is never called). The fiber is interruptible whatever the flags `runtime` was
 * captured with (a layer's start may run uninterruptibly): else a cancelled sleep would still fire.
 * The interrupt is sent, not awaited (`Runtime.runCallback`'s canceller runs a second fiber to
 * await it, which doubles the cost of a timer that most calls cancel).
 */
export const whenDone = (runtime: Runtime.Runtime<never>, effect: Effect.Effect<unknown>, done: () => void): () => void => {
  const fiber = Runtime.runFork(runtime)(Effect.interruptible(effect))
  fiber.addObserver((exit) => Exit.isSuccess(exit) && done())
  return () => fiber.unsafeInterruptAsFork(FiberId.none)
}

/** `done` after `ms` of `runtime`'s Clock; returns what cancels it. */
export const afterMillis = (runtime: Runtime.Runtime<never>, ms: number, done: () => void): () => void =>
  whenDone(runtime, Effect.sleep(ms), done)
