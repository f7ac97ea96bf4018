/**
 * A run interrupted twice (a host aborts the call, then shuts down while the kill is in its grace):
 * the kill path in the run's finalizer is not cut short by the second interrupt; and a run interrupted
 * while its spawn is still under way (a spawn is uninterruptible, and may take its time) kills the
 * command once it is there (fake spawner, TestClock).
 */
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import * as NodePath from "@effect/platform-node/NodePath"
import { describe, expect, it } from "@effect/vitest"
import { Deferred, Effect, Exit, Fiber, FiberId, Layer, TestClock } from "effect"
import * as LocalBashExecutor from "../../src/layers/LocalBashExecutor.js"
import { BashExecutor } from "../../src/services/BashExecutor.js"
import { ProcessSpawner } from "../../src/services/ProcessSpawner.js"
import * as FakeProcessSpawner from "../../src/testing/FakeProcessSpawner.js"
import { FakeSpawnerControl } from "../../src/testing/FakeProcessSpawner.js"
import { untilSuspended } from "../support/fibers.js"

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

  it.effect("an interrupt while the spawn is handing the command over kills it once it is there", () =>
    Effect.gen(function*() {
      const handedOver = yield* Deferred.make<void>()
      const fake = FakeProcessSpawner.layer()
      // The command runs before the spawn returns: the spawn hands it over later, uninterruptibly.
      const handingOver = Layer.effect(
        ProcessSpawner,
        Effect.map(ProcessSpawner, (spawner) =>
          ProcessSpawner.of({
            spawn: (options) => Effect.uninterruptible(Effect.zipRight(Deferred.await(handedOver), spawner.spawn(options)))
          }))
      ).pipe(Layer.provide(fake))
      const layer = Layer.merge(LocalBashExecutor.layerWith({ graceMs, cwd: "/" }).pipe(Layer.provide(handingOver)), fake)
        .pipe(Layer.provide(Layer.merge(NodeFileSystem.layer, NodePath.layer)))
      yield* Effect.gen(function*() {
        const bash = yield* BashExecutor
        const control = yield* FakeSpawnerControl
        const fiber = yield* Effect.fork(Effect.flatMap(bash.resolve({ command: "sleep 30 &" }), bash.run))
        yield* untilSuspended(fiber)
        const interrupter = yield* Effect.fork(Fiber.interrupt(fiber))
        yield* Effect.yieldNow()
        yield* Deferred.succeed(handedOver, undefined)
        const process = yield* control.next
        yield* TestClock.adjust(graceMs)
        expect(Exit.isInterrupted(yield* Fiber.join(interrupter))).toBe(true)
        expect(yield* process.signals).toEqual([{ signal: "SIGTERM", atMillis: 0 }])
        expect(yield* process.alive).toBe(false)
      }).pipe(Effect.provide(layer))
    }))
})
