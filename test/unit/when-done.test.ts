/**
 * A callback timer of the Clock: under the live Clock it is a plain timer (no fiber per timer, the
 * per-call cost the executor pays for its bounds); under any other Clock it waits
 * on that Clock, so a TestClock still decides when it fires or that a cancelled one never does.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Supervisor, TestClock } from "effect"
import { afterMillis } from "../../src/layers/internal/whenDone.js"

describe("afterMillis", () => {
  it.live("starts no fiber under the live Clock", () =>
    Effect.gen(function*() {
      const supervisor = yield* Supervisor.track
      const runtime = yield* Effect.supervised(Effect.runtime<never>(), supervisor)
      let fired = false
      const cancel = afterMillis(runtime, 60_000, () => {
        fired = true
      })
      const fibers = yield* supervisor.value
      cancel()
      expect(fibers).toHaveLength(0)
      expect(fired).toBe(false)
    }))

  it.effect("fires after the TestClock has moved by its time, and never once cancelled", () =>
    Effect.gen(function*() {
      const runtime = yield* Effect.runtime<never>()
      const fired: Array<string> = []
      afterMillis(runtime, 1_000, () => fired.push("kept"))
      const cancel = afterMillis(runtime, 1_000, () => fired.push("cancelled"))
      yield* TestClock.adjust("999 millis")
      expect(fired).toEqual([])
      cancel()
      yield* TestClock.adjust("1 millis")
      yield* Effect.yieldNow()
      expect(fired).toEqual(["kept"])
    }))
})
