/**
 * The host looks at its reaper on the Clock while a group is live (a stopped reaper is resumed), and
 * keeps no timer once none is: a fake reaper counts the looks, TestClock drives the time, and a Clock
 * over it counts the sleeps still pending (TestClock keeps an interrupted sleep in its list).
 */
import { describe, expect, it } from "@effect/vitest"
import { Clock, Effect, Supervisor, TestClock } from "effect"
import { makeHostDeath } from "../../src/layers/internal/spawner/hostDeath.js"
import { HostReaper } from "../../src/layers/internal/spawner/HostReaper.js"

/** `clock`, counting in `pending` the sleeps that have neither ended nor been interrupted. */
const countingSleeps = (clock: Clock.Clock, pending: { count: number }): Clock.Clock => ({
  [Clock.ClockTypeId]: Clock.ClockTypeId,
  unsafeCurrentTimeMillis: () => clock.unsafeCurrentTimeMillis(),
  unsafeCurrentTimeNanos: () => clock.unsafeCurrentTimeNanos(),
  currentTimeMillis: clock.currentTimeMillis,
  currentTimeNanos: clock.currentTimeNanos,
  sleep: (duration) =>
    Effect.suspend(() => {
      pending.count++
      return Effect.ensuring(clock.sleep(duration), Effect.sync(() => pending.count--))
    })
})

const idleReaper = (resumeIfStopped: Effect.Effect<void>) =>
  HostReaper.of({
    track: () => Effect.void,
    trackTerminal: () => Effect.void,
    forget: () => Effect.void,
    removeOnDeath: () => Effect.void,
    resumeIfStopped
  })

describe("the host's look at its reaper", () => {
  it.scoped("happens every 500 ms while a group is live, and stops as the last is released", () =>
    Effect.gen(function*() {
      const pending = { count: 0 }
      let looks = 0
      const hostDeath = yield* makeHostDeath(idleReaper(Effect.sync(() => looks++))).pipe(Effect.withClock(countingSleeps(yield* Effect.clock, pending)))
      yield* TestClock.adjust(2_000)
      expect(looks, "no group, no look").toBe(0)

      const [first, second] = [101, 102]
      yield* hostDeath.giveReaper(first)
      yield* Effect.yieldNow()
      expect(pending.count, "a group is live: its watch sleeps").toBe(1)
      yield* TestClock.adjust(499)
      expect(looks).toBe(0)
      yield* TestClock.adjust(1)
      expect(looks).toBe(1)
      yield* hostDeath.giveReaper(second)
      yield* TestClock.adjust(1_000)
      expect(looks, "one watch for any number of groups").toBe(3)

      yield* hostDeath.release(first)
      yield* TestClock.adjust(500)
      expect(looks, "a group is still live").toBe(4)
      yield* hostDeath.release(second)
      expect(pending.count, "no group live: no timer left").toBe(0)
      yield* TestClock.adjust(500)
      expect(looks).toBe(4)

      // Off the old watch's beat: the new one starts from the group's start.
      yield* TestClock.adjust(250)
      yield* hostDeath.giveReaper(103)
      yield* TestClock.adjust(499)
      expect(looks).toBe(4)
      yield* TestClock.adjust(1)
      expect(looks, "a new group starts it again").toBe(5)
    }))

  // Started and stopped once per call: under the live Clock the watch is a timer, not a fiber.
  it.live("is a timer under the live Clock: watching a group starts no fiber", () =>
    Effect.gen(function*() {
      const supervisor = yield* Supervisor.track
      const hostDeath = yield* Effect.supervised(makeHostDeath(idleReaper(Effect.void)), supervisor)
      const first = 104
      yield* hostDeath.giveReaper(first)
      const fibers = yield* supervisor.value
      yield* hostDeath.release(first)
      expect(fibers).toHaveLength(0)
    }).pipe(Effect.scoped))
})
