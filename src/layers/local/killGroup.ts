/**
 * The one kill path — timeout, abort, interruption, `kill()`, leftovers and disposal all use it:
 * SIGTERM to the group, then SIGKILL `graceMs` later only if a member is still alive.
 *
 * @since 0.1.0
 */
import { Effect, Option } from "effect"
import type { SpawnedProcess } from "../../services/ProcessSpawner.js"

const firstPollMs = 5
const maxPollMs = 50

/**
 * Polls (by the Clock) until no member of the group is alive; unbounded on its own, so callers bound it.
 *
 * @since 0.1.0
 */
const awaitGroupDeath = (process: SpawnedProcess): Effect.Effect<void> =>
  Effect.gen(function*() {
    let delay = firstPollMs
    while (yield* process.groupAlive) {
      yield* Effect.sleep(delay)
      delay = Math.min(delay * 2, maxPollMs)
    }
  })

// Interruptible, so the bound also holds inside a finalizer (where fibers are uninterruptible).
const deathWithin = (process: SpawnedProcess, graceMs: number) =>
  Effect.interruptible(awaitGroupDeath(process)).pipe(Effect.timeoutOption(graceMs), Effect.map(Option.isSome))

/**
 * TERM → wait up to `graceMs` → KILL if anything survived → wait up to `graceMs` more.
 * Returns whether SIGKILL was needed.
 *
 * @since 0.1.0
 */
export const killGroup = (process: SpawnedProcess, graceMs: number): Effect.Effect<boolean> =>
  Effect.gen(function*() {
    yield* process.signalGroup("SIGTERM")
    if (yield* deathWithin(process, graceMs)) return false
    yield* process.signalGroup("SIGKILL")
    // A member in uninterruptible sleep can outlive SIGKILL for a while; never wait without a bound.
    yield* deathWithin(process, graceMs)
    return true
  }).pipe(Effect.withSpan("BashExecutor.killGroup", { attributes: { pgid: process.pid } }))
