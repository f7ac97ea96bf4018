/**
 * Fiber helpers for tests that act while a call is parked (a spawn still under way).
 */
import type { Fiber } from "effect"
import { Effect } from "effect"

/** Yields (a bounded number of turns) until `fiber` is suspended; the caller checks the outcome. */
export const untilSuspended = <A, E>(fiber: Fiber.RuntimeFiber<A, E>) =>
  Effect.gen(function*() {
    for (let turn = 0; turn < 100 && (yield* fiber.status)._tag !== "Suspended"; turn++) yield* Effect.yieldNow()
  })
