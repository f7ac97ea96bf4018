/**
 * The pipes of a command run by an exec, as `ProcessSpawner.OpenPipes`: frames arrive only as the
 * exec's stream is read, so delivering them is always a fiber's work, and `hasWork` holds until the
 * stream has ended.
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import type { ProcessSpawner } from "../../../services/ProcessSpawner.js"

/**
 * Pipes read by `read`, which hands every chunk to `deliver` (dropped once the pipes are closed) and
 * returns once both have ended.
 */
export const execPipes = (
  sinks: ProcessSpawner.OutputSinks,
  read: (deliver: (stream: "stdout" | "stderr", bytes: Uint8Array) => Effect.Effect<void>) => Effect.Effect<void>
): ProcessSpawner.OpenPipes => {
  let pipesEnded = false
  let closed = false
  let listeners: Array<() => void> = []
  const deliver = (stream: "stdout" | "stderr", bytes: Uint8Array): Effect.Effect<void> => {
    if (closed) return Effect.void
    return sinks[stream](bytes) ?? Effect.void
  }
  return {
    get ended() {
      return pipesEnded
    },
    get hasWork() {
      return !pipesEnded
    },
    onChange: (listener) => {
      listeners.push(listener)
      return () => {
        listeners = listeners.filter((each) => each !== listener)
      }
    },
    drain: Effect.ensuring(
      read(deliver),
      Effect.sync(() => {
        pipesEnded = true
        const waiting = listeners
        listeners = []
        for (const listener of waiting) listener()
      })
    ),
    close: () => {
      closed = true
      listeners = []
    }
  }
}
