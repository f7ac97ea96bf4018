/**
 * The host's escalation (`LocalBashExecutorConfig.escalation`): once it completes, every kill sends
 * SIGKILL right after SIGTERM, pending grace periods end, and no pipe drain is waited for. Fake
 * spawner and TestClock: no processes, no real time.
 */
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import * as NodePath from "@effect/platform-node/NodePath"
import { describe, expect, it } from "@effect/vitest"
import { Context, Deferred, Effect, Exit, Fiber, Layer, Scope, TestClock } from "effect"
import type { FakeScript } from "../../src/testing/FakeProcessSpawner.js"
import * as FakeProcessSpawner from "../../src/testing/FakeProcessSpawner.js"
import { FakeSpawnerControl } from "../../src/testing/FakeProcessSpawner.js"
import * as LocalBashExecutor from "../../src/layers/LocalBashExecutor.js"
import { BashExecutor } from "../../src/services/BashExecutor.js"

const timeoutMs = 1_000
const graceMs = 3_000

const executorWith = (script: FakeScript, escalation: Deferred.Deferred<void>) =>
  LocalBashExecutor.layerWith({ graceMs, timeoutMs, cwd: "/", escalation: Deferred.await(escalation) }).pipe(
    Layer.provideMerge(FakeProcessSpawner.layer(() => script)),
    Layer.provide(Layer.merge(NodeFileSystem.layer, NodePath.layer))
  )

/** Builds the executor in its own scope, so a test can close it. */
const build = (script: FakeScript) =>
  Effect.gen(function*() {
    const escalation = yield* Deferred.make<void>()
    const scope = yield* Scope.make()
    yield* Effect.addFinalizer(() => Scope.close(scope, Exit.void))
    const context = yield* Layer.buildWithScope(executorWith(script, escalation), scope)
    const executor = Context.get(context, BashExecutor)
    const control = Context.get(context, FakeSpawnerControl)
    const escalate = Deferred.succeed(escalation, undefined)
    return { executor, control, scope, escalate }
  })

describe("kill escalation by the host (TestClock)", () => {
  it.scoped("an escalation during the grace period sends SIGKILL at once", () =>
    Effect.gen(function*() {
      const { control, escalate, executor } = yield* build({ onTerm: "ignore" })
      const fiber = yield* Effect.fork(executor.run(yield* executor.resolve({ command: "stubborn" })))
      const process = yield* control.next
      yield* TestClock.adjust(timeoutMs + 100)
      expect((yield* process.signals).map((sent) => sent.signal)).toEqual(["SIGTERM"])
      yield* escalate
      const result = yield* Fiber.join(fiber)
      expect(yield* process.signals).toEqual([
        { signal: "SIGTERM", atMillis: timeoutMs },
        { signal: "SIGKILL", atMillis: timeoutMs + 100 }
      ])
      expect(result).toMatchObject({ timedOut: true, signal: "SIGKILL" })
    }))

  it.scoped("after an escalation every kill sends SIGKILL right after SIGTERM", () =>
    Effect.gen(function*() {
      const { control, escalate, executor } = yield* build({ onTerm: "ignore" })
      yield* escalate
      const fiber = yield* Effect.fork(executor.run(yield* executor.resolve({ command: "stubborn" })))
      const process = yield* control.next
      yield* TestClock.adjust(timeoutMs)
      yield* Fiber.join(fiber)
      expect(yield* process.signals).toEqual([
        { signal: "SIGTERM", atMillis: timeoutMs },
        { signal: "SIGKILL", atMillis: timeoutMs }
      ])
    }))

  it.scoped("closing the layer ends at the escalation, not after graceMs, for foreground and background", () =>
    Effect.gen(function*() {
      const { control, escalate, executor, scope } = yield* build({ onTerm: "ignore" })
      const foreground = yield* Effect.fork(executor.run(yield* executor.resolve({ command: "fg" })))
      const background = yield* executor.start(yield* executor.resolve({ command: "bg" }))
      const processes = [yield* control.next, yield* control.next]
      yield* TestClock.adjust(50)
      const closing = yield* Effect.fork(Scope.close(scope, Exit.void))
      yield* TestClock.adjust(200)
      expect(closing.unsafePoll()).toBeNull()
      yield* escalate
      yield* Fiber.join(closing)
      for (const process of processes) {
        expect(yield* process.signals).toEqual([
          { signal: "SIGTERM", atMillis: 50 },
          { signal: "SIGKILL", atMillis: 250 }
        ])
      }
      expect((yield* Fiber.join(foreground)).signal).toBe("SIGKILL")
      expect(yield* background.done).toMatchObject({ status: "killed" })
    }))

  it.scoped("an escalation ends the drain wait for pipes a daemon holds after the shell exited", () =>
    Effect.gen(function*() {
      const { control, escalate, executor } = yield* build({ onTerm: "obey", pipesOutliveGroup: true })
      const fiber = yield* Effect.fork(executor.run(yield* executor.resolve({ command: "daemonize" })))
      const process = yield* control.next
      yield* process.writeStdout("partial\n")
      yield* process.exit({ exitCode: 0, signal: null })
      yield* TestClock.adjust(100)
      expect(fiber.unsafePoll()).toBeNull()
      yield* escalate
      const result = yield* Fiber.join(fiber)
      expect(result).toMatchObject({ exitCode: 0, stdout: { text: "partial\n" } })
    }))
})
