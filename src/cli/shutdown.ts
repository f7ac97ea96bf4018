/**
 * A CLI command's shutdown and its escalation. Shutdown starts with the first signal (the runtime
 * then interrupts the program) or when the command decides to stop (the MCP client hung up); it is
 * graceful — every process group gets SIGTERM and its grace period. It escalates — every kill,
 * pending or later, sends SIGKILL at once (the executor's `escalation`) — on any signal after that,
 * and `deadlineMs` after it started when a deadline is given.
 *
 * Why: an MCP client closes a server by ending its stdin, then SIGTERM 2 s later and SIGKILL 2 s
 * after that (the official SDK's `StdioClientTransport`). A SIGKILLed host runs no finalizer, so a
 * process group still in its grace period then would survive it.
 */
import type * as Scope from "effect/Scope"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"

/**
 * Where signals come from: the process, or a fake in tests.
 */
export interface SignalSource {
  readonly on: (listener: () => void) => void
  readonly off: (listener: () => void) => void
}

const shutdownSignals = ["SIGINT", "SIGTERM"] as const

/**
 * SIGINT and SIGTERM of this process. Listening adds to the host's own handlers (the runtime's
 * interrupt), it does not replace them.
 */
export const processSignals: SignalSource = {
  on: (listener) => shutdownSignals.forEach((signal) => process.on(signal, listener)),
  off: (listener) => shutdownSignals.forEach((signal) => process.off(signal, listener))
}

/**
 * One command's shutdown.
 */
export interface Shutdown {
  /** Starts the shutdown (idempotent); signals from now on escalate. */
  readonly begin: Effect.Effect<void>
  /** Completes when the shutdown escalates: give it to the executor as its `escalation`. */
  readonly escalation: Effect.Effect<void>
}

/**
 * Watches `signals` for the lifetime of the scope. The deadline runs on the Clock, in the scope
 * (not in the program's fiber), so it keeps running while an interrupted program closes its scopes.
 */
export const makeShutdown = (options: {
  readonly signals: SignalSource
  readonly deadlineMs?: number
}): Effect.Effect<Shutdown, never, Scope.Scope> =>
  Effect.gen(function*() {
    const started = yield* Deferred.make<void>()
    const escalated = yield* Deferred.make<void>()
    let begun = false
    const begin = () => {
      begun = true
      Deferred.unsafeDone(started, Effect.void)
    }
    const onSignal = () => (begun ? Deferred.unsafeDone(escalated, Effect.void) : begin())
    yield* Effect.acquireRelease(
      Effect.sync(() => options.signals.on(onSignal)),
      () => Effect.sync(() => options.signals.off(onSignal))
    )
    if (options.deadlineMs !== undefined) {
      yield* Deferred.await(started).pipe(
        Effect.zipRight(Effect.sleep(options.deadlineMs)),
        Effect.zipRight(Deferred.succeed(escalated, undefined)),
        Effect.forkScoped
      )
    }
    return { begin: Effect.sync(begin), escalation: Deferred.await(escalated) }
  })
