/**
 * A run interrupted twice (a host aborts the call, then shuts down while the kill is in its grace):
 * the kill path in the run's finalizer is not cut short by the second interrupt (fake spawner, TestClock).
 */
import { NodeFileSystem, NodePath } from "@effect/platform-node"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Exit, Fiber, FiberId, Layer, TestClock } from "effect"
import * as LocalBashExecutor from "../../src/layers/LocalBashExecutor.js"
import { BashExecutor } from "../../src/services/BashExecutor.js"
import * as FakeProcessSpawner from "../../src/testing/FakeProcessSpawner.js"
import { FakeSpawnerControl } from "../../src/testing/FakeProcessSpawner.js"

const graceMs = 300

const executor = LocalBashExecutor.layerWith({ graceMs, cwd: "/" }).pipe(
  Layer.provideMerge(FakeProcessSpawner.layer(() => ({ onTerm: "ignore" }))),
  Layer.provide(Layer.merge(NodeFileSystem.layer, NodePath.layer))
)

describe("kill path under repeated interruption (TestClock)", () => {
  it.effect("a second interrupt during the grace still ends in SIGKILL at graceMs", () =>
    Effect.gen(function*() {
      const bash = yield* BashExecutor
      const control = yield* FakeSpawnerControl
      const fiber = yield* Effect.fork(Effect.flatMap(bash.resolve({ command: "stubborn" }), bash.run))
      const process = yield* control.next
      // Fiber.interrupt waits for the finalizer, which sleeps on the clock: interrupt from a fork.
      const interrupter = yield* Effect.fork(Fiber.interrupt(fiber))
      yield* TestClock.adjust(100)
      expect(yield* process.signals).toEqual([{ signal: "SIGTERM", atMillis: 0 }])
      fiber.unsafeInterruptAsFork(FiberId.none)
      yield* TestClock.adjust(graceMs)
      expect(Exit.isInterrupted(yield* Fiber.join(interrupter))).toBe(true)
      expect(yield* process.signals).toEqual([
        { signal: "SIGTERM", atMillis: 0 },
        { signal: "SIGKILL", atMillis: graceMs }
      ])
      expect(yield* process.alive).toBe(false)
    }).pipe(Effect.provide(executor)))
})
