/**
 * The supervision's rules at the edges of a call's life, under TestClock: the fake spawner hands
 * chunks to their sinks from the write itself and reports work only when a sink has some, as the
 * real spawner's reader does, so these run the path production runs. With the kill path's timing
 * (executor-timing.test.ts) they reach every branch of `supervise.ts` and `killGroup.ts`, which
 * `npm test` checks.
 */
import * as FileSystem from "@effect/platform/FileSystem"
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import * as NodePath from "@effect/platform-node/NodePath"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Fiber, Layer, TestClock } from "effect"
import * as LocalBashExecutor from "../../src/layers/LocalBashExecutor.js"
import { BashExecutor } from "../../src/services/BashExecutor.js"
import { ProcessSpawner } from "../../src/services/ProcessSpawner.js"
import type { FakeProcess, FakeScript } from "../../src/testing/FakeProcessSpawner.js"
import * as FakeProcessSpawner from "../../src/testing/FakeProcessSpawner.js"
import { FakeSpawnerControl } from "../../src/testing/FakeProcessSpawner.js"

const timeoutMs = 1_000
const graceMs = 300

const executorWith = (script: FakeScript, settings: LocalBashExecutor.Settings.Input = {}) =>
  LocalBashExecutor.layerWith({ graceMs, timeoutMs, cwd: "/", ...settings }).pipe(
    Layer.provideMerge(FakeProcessSpawner.layer(() => script)),
    Layer.provide(Layer.merge(NodeFileSystem.layer, NodePath.layer))
  )

/**
 * The fake spawner, with `meanwhile` run on each process as its spawn completes: what happens
 * between the command's start and its supervision (an exit, an abort) with no gap for the test.
 */
const executorWhoseSpawn = (meanwhile: (process: FakeProcess) => Effect.Effect<void>) =>
  LocalBashExecutor.layerWith({ graceMs, timeoutMs, cwd: "/" }).pipe(
    Layer.provide(Layer.effect(
      ProcessSpawner,
      Effect.gen(function*() {
        const inner = yield* ProcessSpawner
        const control = yield* FakeSpawnerControl
        return ProcessSpawner.of({
          spawn: (options) => Effect.tap(inner.spawn(options), () => Effect.flatMap(control.next, meanwhile))
        })
      })
    )),
    Layer.provideMerge(FakeProcessSpawner.layer(() => ({ onTerm: "obey" }))),
    Layer.provide(Layer.merge(NodeFileSystem.layer, NodePath.layer))
  )

const startRun = (command = "work") =>
  Effect.gen(function*() {
    const executor = yield* BashExecutor
    const control = yield* FakeSpawnerControl
    const fiber = yield* Effect.fork(executor.run(yield* executor.resolve({ command })))
    return { fiber, process: yield* control.next }
  })

describe("supervision (TestClock, the callback path)", () => {
  it.effect("an abort that fires while the command starts is answered as its supervision begins", () => {
    const controller = new AbortController()
    let spawned: FakeProcess | undefined
    return Effect.gen(function*() {
      const executor = yield* BashExecutor
      const result = yield* executor.run(yield* executor.resolve({ command: "work", signal: controller.signal }))
      expect(result).toMatchObject({ aborted: true, timedOut: false, signal: "SIGTERM" })
      expect(yield* spawned!.signals).toEqual([{ signal: "SIGTERM", atMillis: 0 }])
    }).pipe(Effect.provide(executorWhoseSpawn((process) =>
      Effect.sync(() => {
        spawned = process
        controller.abort("user pressed stop")
      })
    )))
  })

  it.effect("a command that exited before its supervision began is answered by its exit, whatever fired after", () => {
    const controller = new AbortController()
    let spawned: FakeProcess | undefined
    return Effect.gen(function*() {
      const executor = yield* BashExecutor
      const result = yield* executor.run(yield* executor.resolve({ command: "work", signal: controller.signal }))
      expect(result).toMatchObject({ aborted: false, exitCode: 0, stdout: { text: "done\n" } })
      expect(yield* spawned!.signals).toEqual([])
    }).pipe(Effect.provide(executorWhoseSpawn((process) =>
      Effect.gen(function*() {
        spawned = process
        yield* process.writeStdout("done\n")
        yield* process.exit({ exitCode: 0, signal: null })
        controller.abort("too late")
      })
    )))
  })

  it.effect("pipes that end within the grace after the exit are read to their end, and the call settles then", () =>
    Effect.gen(function*() {
      const { fiber, process } = yield* startRun()
      yield* process.exit({ exitCode: 0, signal: null })
      yield* TestClock.adjust(graceMs - 1)
      yield* process.writeStdout("late\n")
      yield* process.closePipes
      // The clock stays short of the grace: the call can only settle because the pipes ended.
      const result = yield* Fiber.join(fiber)
      expect(result).toMatchObject({ exitCode: 0, stdout: { text: "late\n", truncated: false } })
      expect(yield* process.signals).toEqual([])
    }).pipe(Effect.provide(executorWith({ onTerm: "obey", pipesOutliveGroup: true }))))

  it.effect("output that spills after the exit is written in full before the call settles", () =>
    Effect.gen(function*() {
      const { fiber, process } = yield* startRun()
      yield* process.exit({ exitCode: 0, signal: null })
      yield* TestClock.adjust(10)
      yield* process.writeStdout("0123456789abcdef\n")
      yield* process.writeStdout("more\n")
      yield* process.closePipes
      const result = yield* Fiber.join(fiber)
      expect(result.stdout).toMatchObject({ text: "ef\nmore\n", truncated: true })
      const spilled = Effect.flatMap(FileSystem.FileSystem, (fs) => fs.readFileString(result.stdout.spillPath!))
      expect(yield* Effect.provide(spilled, NodeFileSystem.layer)).toBe("0123456789abcdef\nmore\n")
    }).pipe(Effect.provide(executorWith({ onTerm: "obey", pipesOutliveGroup: true }, { maxOutputBytes: 8 }))))

  it.effect("a call interrupted while its pipes drain after the exit signals the group no more", () =>
    Effect.gen(function*() {
      const { fiber, process } = yield* startRun()
      yield* process.writeStdout("partial\n")
      yield* process.exit({ exitCode: 0, signal: null })
      yield* TestClock.adjust(10)
      yield* Fiber.interrupt(fiber)
      expect(yield* process.signals).toEqual([])
    }).pipe(Effect.provide(executorWith({ onTerm: "obey", pipesOutliveGroup: true }))))

  it.effect("a background process whose output spills while it runs still has no timeout", () =>
    Effect.gen(function*() {
      const executor = yield* BashExecutor
      const control = yield* FakeSpawnerControl
      const handle = yield* executor.start(yield* executor.resolve({ command: "bg" }))
      const process = yield* control.next
      yield* process.writeStdout("0123456789abcdef\n")
      yield* TestClock.adjust(timeoutMs * 10)
      expect(yield* process.signals).toEqual([])
      expect((yield* handle.state).status).toBe("running")
      yield* process.exit({ exitCode: 0, signal: null })
      expect(yield* handle.done).toEqual({ status: "completed", exitCode: 0, signal: null })
    }).pipe(Effect.provide(executorWith({ onTerm: "obey" }, { maxOutputBytes: 8 }))))
})
