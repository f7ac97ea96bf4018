/**
 * A process's exit as a `ProcessSpawner.Process` reports it: settled once (later settles are
 * ignored), then given to the awaiters of `exit` and to every `onExit` listener, a listener added
 * afterwards being called at once.
 *
 * @internal
 */
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as FiberId from "effect/FiberId"
import type { ProcessSpawner } from "../../../services/ProcessSpawner.js"

export interface ExitLatch {
  /** The exit, once settled. */
  readonly value: ProcessSpawner.Exit | undefined
  /** Settles the exit, unless it is settled already. */
  readonly settle: (exit: ProcessSpawner.Exit) => void
  readonly exit: ProcessSpawner.Process["exit"]
  readonly onExit: ProcessSpawner.Process["onExit"]
}

export const makeExitLatch = (): ExitLatch => {
  const exited = Deferred.unsafeMake<ProcessSpawner.Exit>(FiberId.none)
  let value: ProcessSpawner.Exit | undefined
  let listeners: Array<(exit: ProcessSpawner.Exit) => void> = []
  return {
    get value() {
      return value
    },
    settle: (exit) => {
      if (value !== undefined) return
      value = exit
      Deferred.unsafeDone(exited, Effect.succeed(exit))
      const waiting = listeners
      listeners = []
      for (const listener of waiting) listener(exit)
    },
    exit: Deferred.await(exited),
    onExit: (listener) => {
      if (value !== undefined) {
        listener(value)
        return () => {}
      }
      listeners.push(listener)
      return () => {
        listeners = listeners.filter((each) => each !== listener)
      }
    }
  }
}
