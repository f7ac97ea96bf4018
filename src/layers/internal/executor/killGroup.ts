/**
 * The one kill path — timeout, abort, interruption, `kill()`, leftovers and disposal all use it:
 * SIGTERM to the group, then SIGKILL `graceMs` later only if a member is still alive — or at once
 * when the host escalates (`escalation` completes: a second shutdown signal, a shutdown deadline).
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import type { ProcessSpawner } from "../../../services/ProcessSpawner.js"

const firstPollMs = 5
const maxPollMs = 50

/**
 * Polls (by the Clock) until no member of the group is alive; unbounded on its own, so callers bound it.
 */
const awaitGroupDeath = (process: ProcessSpawner.Process): Effect.Effect<void> =>
  Effect.gen(function*() {
    let delay = firstPollMs
    while (yield* process.groupAlive) {
      yield* Effect.sleep(delay)
      delay = Math.min(delay * 2, maxPollMs)
    }
  })

/**
 * Waits for `effect` at most `graceMs`, and not at all once `escalation` has completed: `true` when
 * `effect` finished in time. Each contender is interruptible, so the losers stop and the bound holds
 * inside a finalizer too (where fibers are uninterruptible); the wait itself keeps the caller's
 * interruptibility, so a kill in a finalizer is not cut short by an interrupt. The race runs in a
 * fiber of its own: an interrupt signal reaches a fiber's children even in a finalizer, so a
 * contender forked by the caller would die of a second interrupt (a host aborting a call, then
 * shutting down) and end the kill before its SIGKILL.
 */
export const withinGrace = (
  effect: Effect.Effect<unknown>,
  graceMs: number,
  escalation: Effect.Effect<void> = Effect.never
): Effect.Effect<boolean> =>
  Effect.flatMap(
    Effect.forkDaemon(Effect.interruptible(Effect.raceAll([
      Effect.as(effect, true),
      Effect.as(Effect.sleep(graceMs), false),
      Effect.as(escalation, false)
    ]))),
    (race) => Effect.onInterrupt(Fiber.join(race), () => Fiber.interrupt(race))
  )

/**
 * TERM → wait up to `graceMs` (less once `escalation` completes) → KILL if anything survived →
 * wait up to `graceMs` more. Returns whether SIGKILL was needed.
 */
export const killGroup = (
  process: ProcessSpawner.Process,
  graceMs: number,
  escalation: Effect.Effect<void> = Effect.never
): Effect.Effect<boolean> =>
  Effect.gen(function*() {
    yield* process.signalGroup("SIGTERM")
    if (yield* withinGrace(awaitGroupDeath(process), graceMs, escalation)) return false
    yield* process.signalGroup("SIGKILL")
    // A member in uninterruptible sleep can outlive SIGKILL for a while; never wait without a bound.
    yield* withinGrace(awaitGroupDeath(process), graceMs)
    return true
  }).pipe(Effect.withSpan("BashExecutor.killGroup", { attributes: { pgid: process.pid } }))
