/**
 * The CLI's shutdown escalation (`src/cli/shutdown.ts`) with a fake signal source and TestClock; the
 * real-signal run through the built CLI is in test/process/cli-shutdown.test.ts.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Exit, Fiber, Scope, TestClock } from "effect"
import type { SignalSource } from "../../src/cli/shutdown.js"
import { makeShutdown } from "../../src/cli/shutdown.js"

/** A signal source a test fires by hand. */
const fakeSignals = () => {
  const listeners = new Set<() => void>()
  const source: SignalSource = { on: (listener) => listeners.add(listener), off: (listener) => listeners.delete(listener) }
  return { source, listeners, fire: () => Effect.sync(() => [...listeners].forEach((listener) => listener())) }
}

/** Whether the shutdown has escalated, after letting its fibers run. */
const escalated = (escalation: Effect.Effect<void>) =>
  Effect.gen(function*() {
    const fiber = yield* Effect.fork(escalation)
    yield* Effect.yieldNow()
    const done = fiber.unsafePoll() !== null
    yield* Fiber.interrupt(fiber)
    return done
  })

describe("CLI shutdown escalation (TestClock)", () => {
  it.scoped("the first signal starts a graceful shutdown; the second escalates at once", () =>
    Effect.gen(function*() {
      const signals = fakeSignals()
      const shutdown = yield* makeShutdown({ signals: signals.source })
      yield* signals.fire()
      expect(yield* escalated(shutdown.escalation)).toBe(false)
      yield* signals.fire()
      expect(yield* escalated(shutdown.escalation)).toBe(true)
    }))

  it.scoped("a signal after the command began its own shutdown escalates at once", () =>
    Effect.gen(function*() {
      const signals = fakeSignals()
      const shutdown = yield* makeShutdown({ signals: signals.source })
      yield* shutdown.begin
      expect(yield* escalated(shutdown.escalation)).toBe(false)
      yield* signals.fire()
      expect(yield* escalated(shutdown.escalation)).toBe(true)
    }))

  it.scoped("the deadline escalates exactly deadlineMs after the shutdown began, and not before it began", () =>
    Effect.gen(function*() {
      const signals = fakeSignals()
      const shutdown = yield* makeShutdown({ signals: signals.source, deadlineMs: 1000 })
      yield* TestClock.adjust(5000)
      expect(yield* escalated(shutdown.escalation)).toBe(false)
      yield* shutdown.begin
      yield* TestClock.adjust(999)
      expect(yield* escalated(shutdown.escalation)).toBe(false)
      yield* TestClock.adjust(1)
      expect(yield* escalated(shutdown.escalation)).toBe(true)
    }))

  it.effect("stops listening when its scope closes", () =>
    Effect.gen(function*() {
      const signals = fakeSignals()
      const scope = yield* Scope.make()
      yield* makeShutdown({ signals: signals.source }).pipe(Scope.extend(scope))
      expect(signals.listeners.size).toBe(1)
      yield* Scope.close(scope, Exit.void)
      expect(signals.listeners.size).toBe(0)
    }))
})
