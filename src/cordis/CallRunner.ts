/**
 * Runs the adapter's effects as Promises on one built runtime, and stops them all at unload: every
 * call in flight is interrupted (a foreground command is killed through the executor's kill path)
 * before the runtime's layers are closed.
 */
import type * as EffectRuntime from "effect/Runtime"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as FiberId from "effect/FiberId"
import * as ManagedRuntime from "effect/ManagedRuntime"
import * as Option from "effect/Option"
import * as Runtime from "effect/Runtime"

/**
 * The runner's face.
 */
export interface CallRunner<R> {
  /** Runs `effect`; rejects with the effect's own error (e.g. a `BashRequestError`), never a wrapper. */
  readonly run: <A, E>(effect: Effect.Effect<A, E, R>) => Promise<A>
  /**
   * `run` until `signal` fires: then the effect is interrupted, and once its interruption is over the
   * promise resolves with `aborted`. A signal that has already fired runs nothing. (The call's own
   * fiber is interrupted: no second fiber waits on a signal that almost never fires.)
   */
  readonly runUntil: <A, E>(effect: Effect.Effect<A, E, R>, signal: AbortSignal, aborted: A) => Promise<A>
  /**
   * Runs an observer (a process's `done`) that must see teardown finish: it is interrupted only
   * after the runtime has been disposed, so it settles with the final state.
   */
  readonly watch: <A, E>(effect: Effect.Effect<A, E, R>) => Promise<A>
  /**
   * Runs a synchronous effect at once; throws its error, or `RunnerClosedError` once shutdown has
   * begun. An effect that would wait is a bug of the service behind it: it is interrupted and
   * reported as a `SynchronousCallError`.
   */
  readonly runSync: <A, E>(effect: Effect.Effect<A, E, R>) => A
  /** `runSync` that keeps working after shutdown: for in-memory reads of settled state. */
  readonly readSync: <A, E>(effect: Effect.Effect<A, E, R>) => A
  /** Interrupts every call in flight, then disposes the runtime. Idempotent. */
  readonly shutdown: () => Promise<void>
}

/**
 * How a `ctx.bash` / `ctx.bashEnv` / `ctx.tasks` call rejects when the plugin unloads while it runs,
 * or when it is made after the plugin unloaded.
 *
 * @since 0.1.0
 * @category models
 */
export class RunnerClosedError extends Error {
  constructor() {
    super("effect-bash: the plugin has been unloaded")
    this.name = "RunnerClosedError"
  }
}

/**
 * A call the seam defines as synchronous suspended (its effect would have waited).
 *
 * @since 0.1.0
 * @category models
 */
export class SynchronousCallError extends Error {
  constructor() {
    super("effect-bash: a synchronous call did not complete at once (its effect suspended)")
    this.name = "SynchronousCallError"
  }
}

const failureOf = <E>(cause: Cause.Cause<E>): unknown =>
  Cause.isInterruptedOnly(cause) ? new RunnerClosedError() : Cause.squash(cause)

/**
 * Builds `managed` (rejecting with its layer's own error; the caller still disposes it) and returns
 * a runner over the built runtime.
 */
export const makeCallRunner = async <R, ER>(
  managed: ManagedRuntime.ManagedRuntime<R, ER>
): Promise<CallRunner<R>> => {
  const built = await Effect.runPromiseExit(managed.runtimeEffect)
  if (Exit.isFailure(built)) throw failureOf(built.cause)
  const runtime: EffectRuntime.Runtime<R> = built.value
  const calls = new Set<Fiber.RuntimeFiber<unknown, unknown>>()
  const watchers = new Set<Fiber.RuntimeFiber<unknown, unknown>>()
  let closing: Promise<void> | undefined

  const tracked =
    (fibers: Set<Fiber.RuntimeFiber<unknown, unknown>>) =>
    <A, E>(effect: Effect.Effect<A, E, R>): Promise<A> => {
      if (closing) return Promise.reject(new RunnerClosedError())
      const fiber = Runtime.runFork(runtime)(effect)
      fibers.add(fiber)
      return new Promise<A>((resolve, reject) =>
        fiber.addObserver((exit) => {
          fibers.delete(fiber)
          if (Exit.isSuccess(exit)) resolve(exit.value)
          else reject(failureOf(exit.cause))
        })
      )
    }

  const runUntil = <A, E>(effect: Effect.Effect<A, E, R>, signal: AbortSignal, aborted: A): Promise<A> => {
    if (closing) return Promise.reject(new RunnerClosedError())
    if (signal.aborted) return Promise.resolve(aborted)
    const fiber = Runtime.runFork(runtime)(effect)
    calls.add(fiber)
    // Once the signal has fired the call answers `aborted`, whatever its interrupted fiber ends with.
    let abortedFirst = false
    const onAbort = () => {
      abortedFirst = true
      fiber.unsafeInterruptAsFork(FiberId.none)
    }
    signal.addEventListener("abort", onAbort, { once: true })
    return new Promise<A>((resolve, reject) =>
      fiber.addObserver((exit) => {
        calls.delete(fiber)
        signal.removeEventListener("abort", onAbort)
        if (abortedFirst) resolve(aborted)
        else if (Exit.isSuccess(exit)) resolve(exit.value)
        else reject(failureOf(exit.cause))
      })
    )
  }

  const readSync = <A, E>(effect: Effect.Effect<A, E, R>): A => {
    const exit = Runtime.runSyncExit(runtime)(effect)
    if (Exit.isSuccess(exit)) return exit.value
    const suspended = Option.flatMap(Cause.dieOption(exit.cause), (defect) =>
      Runtime.isAsyncFiberException(defect) ? Option.some(defect.fiber) : Option.none())
    if (Option.isSome(suspended)) {
      Effect.runFork(Fiber.interrupt(suspended.value))
      throw new SynchronousCallError()
    }
    throw failureOf(exit.cause)
  }

  const runSync = <A, E>(effect: Effect.Effect<A, E, R>): A => {
    if (closing) throw new RunnerClosedError()
    return readSync(effect)
  }

  const shutdown = (): Promise<void> =>
    (closing ??= Effect.runPromise(Fiber.interruptAll([...calls]))
      .then(() => managed.dispose())
      .then(() => Effect.runPromise(Fiber.interruptAll([...watchers]))))

  return { run: tracked(calls), runUntil, watch: tracked(watchers), runSync, readSync, shutdown }
}
