/**
 * Kill-path timing with a fake spawner and TestClock: no processes, no real time.
 */
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import * as NodePath from "@effect/platform-node/NodePath"
import { describe, expect, it } from "@effect/vitest"
import { Context, Effect, Exit, Fiber, Layer, Option, Scope, TestClock } from "effect"
import type { FakeScript } from "../../src/testing/FakeProcessSpawner.js"
import * as FakeProcessSpawner from "../../src/testing/FakeProcessSpawner.js"
import { FakeSpawnerControl } from "../../src/testing/FakeProcessSpawner.js"
import * as LocalBashExecutor from "../../src/layers/LocalBashExecutor.js"
import { BashExecutor } from "../../src/services/BashExecutor.js"
import { ProcessSpawner, SpawnError } from "../../src/services/ProcessSpawner.js"

const timeoutMs = 1_000
const graceMs = 300

const executorWith = (script: FakeScript) =>
  LocalBashExecutor.layerWith({ graceMs, timeoutMs, cwd: "/" }).pipe(
    Layer.provideMerge(FakeProcessSpawner.layer(() => script)),
    Layer.provide(Layer.merge(NodeFileSystem.layer, NodePath.layer))
  )

/** The fake spawner with each exit reported `lagMs` after it is first awaited, as a report of an exit may lag its wait. */
const executorReportingLate = (lagMs: number) =>
  LocalBashExecutor.layerWith({ graceMs, timeoutMs, cwd: "/" }).pipe(
    Layer.provide(Layer.effect(
      ProcessSpawner,
      Effect.map(ProcessSpawner, (inner) =>
        ProcessSpawner.of({
          spawn: (options) =>
            Effect.flatMap(inner.spawn(options), (process) =>
              Effect.map(Effect.cached(Effect.zipLeft(process.exit, Effect.sleep(lagMs))), (exit) => ({ ...process, exit })))
        }))
    )),
    Layer.provideMerge(FakeProcessSpawner.layer(() => ({ onTerm: "ignore" }))),
    Layer.provide(Layer.merge(NodeFileSystem.layer, NodePath.layer))
  )

const startRun = (command = "work", options: { readonly signal?: AbortSignal } = {}) =>
  Effect.gen(function*() {
    const executor = yield* BashExecutor
    const control = yield* FakeSpawnerControl
    const spec = yield* executor.resolve({ command, ...options })
    const fiber = yield* Effect.fork(executor.run(spec))
    const process = yield* control.next
    return { fiber, process }
  })

describe("kill path timing (TestClock)", () => {
  it.effect("sends SIGTERM at exactly timeoutMs and no SIGKILL when the group obeys", () =>
    Effect.gen(function*() {
      const { fiber, process } = yield* startRun()
      yield* TestClock.adjust(timeoutMs - 1)
      expect(yield* process.signals).toEqual([])
      yield* TestClock.adjust(1)
      const result = yield* Fiber.join(fiber)
      expect(yield* process.signals).toEqual([{ signal: "SIGTERM", atMillis: timeoutMs }])
      expect(result).toMatchObject({ timedOut: true, aborted: false, exitCode: null, signal: "SIGTERM", timeoutMs })
    }).pipe(Effect.provide(executorWith({ onTerm: "obey" }))))

  it.effect("sends SIGKILL at exactly timeoutMs + graceMs when something survived SIGTERM", () =>
    Effect.gen(function*() {
      const { fiber, process } = yield* startRun()
      yield* TestClock.adjust(timeoutMs)
      yield* TestClock.adjust(graceMs - 1)
      expect((yield* process.signals).map((sent) => sent.signal)).toEqual(["SIGTERM"])
      yield* TestClock.adjust(1)
      const result = yield* Fiber.join(fiber)
      expect(yield* process.signals).toEqual([
        { signal: "SIGTERM", atMillis: timeoutMs },
        { signal: "SIGKILL", atMillis: timeoutMs + graceMs }
      ])
      expect(result).toMatchObject({ timedOut: true, signal: "SIGKILL" })
    }).pipe(Effect.provide(executorWith({ onTerm: "ignore" }))))

  it.effect("waits up to 2 s for a killed command's exit report, and names its signal", () =>
    Effect.gen(function*() {
      const { fiber } = yield* startRun()
      yield* TestClock.adjust(timeoutMs + graceMs)
      yield* TestClock.adjust(1_998)
      expect(yield* Fiber.poll(fiber)).toEqual(Option.none())
      yield* TestClock.adjust(1)
      expect(yield* Fiber.join(fiber)).toMatchObject({ timedOut: true, exitCode: null, signal: "SIGKILL" })
    }).pipe(Effect.provide(executorReportingLate(1_999))))

  it.effect("reports no signal when a killed group's exit is not reported within 2 s", () =>
    Effect.gen(function*() {
      const { fiber } = yield* startRun()
      yield* TestClock.adjust(timeoutMs + graceMs)
      yield* TestClock.adjust(2_000)
      const result = yield* Fiber.poll(fiber)
      expect(Option.map(result, Exit.map((settled) => settled.signal))).toEqual(Option.some(Exit.succeed(null)))
    }).pipe(Effect.provide(executorReportingLate(60_000))))

  it.effect("bounds that wait for a background task started where interruption is masked (as a tool starts it)", () =>
    Effect.gen(function*() {
      const executor = yield* BashExecutor
      const handle = yield* Effect.uninterruptible(Effect.flatMap(executor.resolve({ command: "bg" }), executor.start))
      yield* (yield* FakeSpawnerControl).next
      expect(yield* handle.kill).toBe(true)
      yield* TestClock.adjust(graceMs)
      yield* TestClock.adjust(2_000)
      expect(yield* handle.state).toEqual({ status: "killed", exitCode: null, signal: null })
    }).pipe(Effect.provide(executorReportingLate(60_000))))

  it.effect("escalates for a TERM-ignoring straggler whose leader died", () =>
    Effect.gen(function*() {
      const { fiber, process } = yield* startRun()
      yield* TestClock.adjust(timeoutMs + graceMs)
      const result = yield* Fiber.join(fiber)
      expect(yield* process.signals).toEqual([
        { signal: "SIGTERM", atMillis: timeoutMs },
        { signal: "SIGKILL", atMillis: timeoutMs + graceMs }
      ])
      // The leader's own death is what the result reports.
      expect(result).toMatchObject({ timedOut: true, signal: "SIGTERM" })
      expect(yield* process.alive).toBe(false)
    }).pipe(Effect.provide(executorWith({ onTerm: "leader-only" }))))

  it.effect("uses the same escalation when the caller is interrupted", () =>
    Effect.gen(function*() {
      const { fiber, process } = yield* startRun()
      yield* TestClock.adjust(100)
      // Fiber.interrupt waits for the finalizer, which sleeps on the clock: interrupt from a fork.
      const interrupter = yield* Effect.fork(Fiber.interrupt(fiber))
      yield* TestClock.adjust(graceMs)
      const exit = yield* Fiber.join(interrupter)
      expect(Exit.isInterrupted(exit)).toBe(true)
      expect(yield* process.signals).toEqual([
        { signal: "SIGTERM", atMillis: 100 },
        { signal: "SIGKILL", atMillis: 100 + graceMs }
      ])
    }).pipe(Effect.provide(executorWith({ onTerm: "ignore" }))))

  it.effect("uses the same escalation when the layer closes", () =>
    Effect.gen(function*() {
      const scope = yield* Scope.make()
      const context = yield* Layer.buildWithScope(executorWith({ onTerm: "ignore" }), scope)
      const executor = Context.get(context, BashExecutor)
      const control = Context.get(context, FakeSpawnerControl)
      const spec = yield* executor.resolve({ command: "fg" })
      const foreground = yield* Effect.fork(executor.run(spec))
      const background = yield* executor.start(yield* executor.resolve({ command: "bg" }))
      const fgProcess = yield* control.next
      const bgProcess = yield* control.next
      yield* TestClock.adjust(50)
      const closing = yield* Effect.fork(Scope.close(scope, Exit.void))
      yield* TestClock.adjust(graceMs)
      yield* Fiber.join(closing)
      for (const process of [fgProcess, bgProcess]) {
        expect(yield* process.signals).toEqual([
          { signal: "SIGTERM", atMillis: 50 },
          { signal: "SIGKILL", atMillis: 50 + graceMs }
        ])
      }
      expect((yield* Fiber.join(foreground)).signal).toBe("SIGKILL")
      expect(yield* background.done).toMatchObject({ status: "killed" })
    }))

  it.effect("bounds the drain after exit by graceMs when a daemon holds the pipes", () =>
    Effect.gen(function*() {
      const { fiber, process } = yield* startRun()
      yield* process.writeStdout("partial\n")
      yield* TestClock.adjust(10)
      yield* process.exit({ exitCode: 0, signal: null })
      yield* TestClock.adjust(graceMs - 1)
      expect(fiber.unsafePoll()).toBeNull()
      yield* TestClock.adjust(1)
      const result = yield* Fiber.join(fiber)
      expect(result).toMatchObject({ exitCode: 0, timedOut: false, stdout: { text: "partial\n", truncated: false } })
      expect(yield* process.signals).toEqual([])
    }).pipe(Effect.provide(executorWith({ onTerm: "obey", pipesOutliveGroup: true }))))

  it.effect("kills leftovers of a shell that exited, at once", () =>
    Effect.gen(function*() {
      const { fiber, process } = yield* startRun()
      yield* TestClock.adjust(20)
      yield* process.exit({ exitCode: 0, signal: null }, { alsoGroup: false })
      const result = yield* Fiber.join(fiber)
      expect(yield* process.signals).toEqual([{ signal: "SIGTERM", atMillis: 20 }])
      expect(result).toMatchObject({ exitCode: 0, signal: null, timedOut: false })
    }).pipe(Effect.provide(executorWith({ onTerm: "obey" }))))

  it.effect("an abort yields aborted: true with the output collected so far", () =>
    Effect.gen(function*() {
      const controller = new AbortController()
      const { fiber, process } = yield* startRun("work", { signal: controller.signal })
      yield* process.writeStdout("so far\n")
      yield* TestClock.adjust(10)
      controller.abort("user pressed stop")
      const result = yield* Fiber.join(fiber)
      expect(result).toMatchObject({ aborted: true, timedOut: false, stdout: { text: "so far\n" } })
      expect(yield* process.signals).toEqual([{ signal: "SIGTERM", atMillis: 10 }])
    }).pipe(Effect.provide(executorWith({ onTerm: "obey" }))))

  it.effect("an abort before spawn fails with the reason and spawns nothing", () =>
    Effect.gen(function*() {
      const executor = yield* BashExecutor
      const control = yield* FakeSpawnerControl
      const spec = yield* executor.resolve({ command: "work", signal: AbortSignal.abort("too late") })
      const error = yield* Effect.flip(executor.run(spec))
      expect(error.message).toBe("aborted before spawn: too late")
      expect(yield* control.spawnCount).toBe(0)
    }).pipe(Effect.provide(executorWith({ onTerm: "obey" }))))

  it.effect("a background kill() goes through the kill path and is idempotent", () =>
    Effect.gen(function*() {
      const executor = yield* BashExecutor
      const control = yield* FakeSpawnerControl
      const handle = yield* executor.start(yield* executor.resolve({ command: "bg", owner: "session-1" }))
      const process = yield* control.next
      expect(yield* handle.kill).toBe(true)
      expect(yield* handle.kill).toBe(true)
      yield* TestClock.adjust(graceMs)
      expect(yield* handle.done).toMatchObject({ status: "killed", signal: "SIGKILL" })
      expect((yield* process.signals).map((sent) => sent.signal)).toEqual(["SIGTERM", "SIGKILL"])
      expect(yield* handle.kill).toBe(false)
      expect(yield* executor.ownerOf(handle.id)).toEqual(expect.objectContaining({ value: "session-1" }))
    }).pipe(Effect.provide(executorWith({ onTerm: "ignore" }))))

  it.effect("no timeout applies to a background process", () =>
    Effect.gen(function*() {
      const executor = yield* BashExecutor
      const control = yield* FakeSpawnerControl
      const handle = yield* executor.start(yield* executor.resolve({ command: "bg" }))
      const process = yield* control.next
      yield* TestClock.adjust(timeoutMs * 10)
      expect(yield* process.signals).toEqual([])
      expect((yield* handle.state).status).toBe("running")
      yield* process.writeStdout("done\n")
      yield* process.exit({ exitCode: 0, signal: null })
      expect(yield* handle.done).toEqual({ status: "completed", exitCode: 0, signal: null })
      expect(yield* handle.readOutput).toEqual({ delta: "done\n", lossy: false })
    }).pipe(Effect.provide(executorWith({ onTerm: "obey" }))))

  it.effect("a background spawn failure settles as killed with the error in stderr", () =>
    Effect.gen(function*() {
      const executor = yield* BashExecutor
      const handle = yield* executor.start(yield* executor.resolve({ command: "bg" }))
      expect(yield* handle.done).toEqual({ status: "killed", exitCode: null, signal: null })
      expect((yield* handle.readOutput).delta).toBe("[stderr]\nspawn failed: no bash here\n")
    }).pipe(Effect.provide(executorWith({
      onTerm: "obey",
      spawnError: new SpawnError({ code: "ENOENT", message: "no bash here" })
    }))))

  it.effect("a background spawn given up because the abort fired says so: aborted before spawn", () =>
    Effect.gen(function*() {
      const executor = yield* BashExecutor
      const controller = new AbortController()
      const handle = yield* executor.start(yield* executor.resolve({ command: "bg", signal: controller.signal }))
      // Before the task's fiber reaches the spawner, which then gives up as a container spawner does.
      controller.abort(new Error("the user pressed Esc"))
      expect(yield* handle.done).toEqual({ status: "killed", exitCode: null, signal: null })
      expect((yield* handle.readOutput).delta).toBe("[stderr]\naborted before spawn: the user pressed Esc\n")
    }).pipe(Effect.provide(executorWith({
      onTerm: "obey",
      spawnError: new SpawnError({ code: undefined, message: "aborted before the command started" })
    }))))

  it.effect("caps running background processes and evicts finished ones", () =>
    Effect.gen(function*() {
      const executor = yield* BashExecutor
      const control = yield* FakeSpawnerControl
      const first = yield* executor.start(yield* executor.resolve({ command: "a", owner: "s" }))
      yield* executor.start(yield* executor.resolve({ command: "b", owner: "s" }))
      const refused = yield* Effect.flip(executor.start(yield* executor.resolve({ command: "c" })))
      expect(refused._tag).toBe("BackgroundLimitError")
      expect(refused.message).toBe("too many background processes running (limit 2); kill one or wait for one to finish")
      const a = yield* control.next
      yield* control.next
      yield* a.exit({ exitCode: 0, signal: null })
      yield* first.done
      const third = yield* executor.start(yield* executor.resolve({ command: "c", owner: "s" }))
      const c = yield* control.next
      yield* c.exit({ exitCode: 0, signal: null })
      yield* third.done
      // maxFinishedBackground is 1: the oldest finished process is no longer tracked.
      expect((yield* executor.ownerOf(first.id))._tag).toBe("None")
      expect((yield* executor.ownerOf(third.id))._tag).toBe("Some")
    }).pipe(Effect.provide(
      LocalBashExecutor.layerWith({ graceMs, cwd: "/", maxBackground: 2, maxFinishedBackground: 1 }).pipe(
        Layer.provideMerge(FakeProcessSpawner.layer()),
        Layer.provide(Layer.merge(NodeFileSystem.layer, NodePath.layer))
      )
    )))
})
