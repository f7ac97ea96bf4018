/**
 * A callback after an effect of the Clock (a sleep, a wait): for code that waits in Node callbacks
 * rather than in a fiber, yet keeps time by the runtime's Clock, so a TestClock drives it in tests.
 *
 * @internal
 */
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as DefaultServices from "effect/DefaultServices"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as FiberId from "effect/FiberId"
import * as FiberRefs from "effect/FiberRefs"
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

// The live Clock's sleep is a `setTimeout` (up to the timer maximum, beyond which it never wakes):
// under it a timer needs no fiber. Any other Clock (a TestClock) is slept on a fiber of `runtime`.
const liveClock: object = Object.getPrototypeOf(Clock.make())
const maxTimerMs = 2 ** 31 - 1

const sleepsOnTimers = (runtime: Runtime.Runtime<never>, ms: number): boolean =>
  ms <= maxTimerMs &&
  Object.getPrototypeOf(
    Context.get(FiberRefs.getOrDefault(runtime.fiberRefs, DefaultServices.currentServices), Clock.Clock)
  ) === liveClock

/** `done` after `ms` of `runtime`'s Clock; returns what cancels it. */
export const afterMillis = (runtime: Runtime.Runtime<never>, ms: number, done: () => void): () => void => {
  if (!sleepsOnTimers(runtime, ms)) return whenDone(runtime, Effect.sleep(ms), done)
  const timer = setTimeout(done, ms)
  return () => clearTimeout(timer)
}


/**
 * `effect` every `ms` of `runtime`'s Clock, each run `ms` after the last one ended, until the returned
 * effect stops it (it awaits a run in flight). A failed or interrupted run ends the repetition.
 */
export const everyMillis = (
  runtime: Runtime.Runtime<never>,
  ms: number,
  effect: Effect.Effect<unknown>
): () => Effect.Effect<void> => {
  if (!sleepsOnTimers(runtime, ms)) {
    const fiber = Runtime.runFork(runtime)(Effect.interruptible(Effect.forever(Effect.zipRight(Effect.sleep(ms), effect))))
    return () => Fiber.interrupt(fiber)
  }
  let stopped = false
  let timer: ReturnType<typeof setTimeout> | undefined
  let run: Fiber.RuntimeFiber<unknown> | undefined
  const next = () => {
    timer = setTimeout(() => {
      timer = undefined
      const current = Runtime.runFork(runtime)(Effect.interruptible(effect))
      run = current
      current.addObserver((exit) => {
        run = undefined
        if (!stopped && Exit.isSuccess(exit)) next()
      })
    }, ms)
  }
  next()
  return () =>
    Effect.suspend(() => {
      stopped = true
      clearTimeout(timer)
      return run === undefined ? Effect.void : Fiber.interrupt(run)
    })
}
