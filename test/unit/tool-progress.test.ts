/**
 * `bash` progress through `AgentTools.call`: the executor's live output, cleaned like model text and
 * rate-limited on the Clock (a fake spawner and TestClock: no processes, no real time).
 */
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import * as NodePath from "@effect/platform-node/NodePath"
import { describe, expect, it } from "@effect/vitest"
import { Chunk, Effect, Fiber, Layer, Option, Queue, TestClock } from "effect"
import * as LocalBashExecutor from "../../src/layers/LocalBashExecutor.js"
import * as FakeProcessSpawner from "../../src/testing/FakeProcessSpawner.js"
import { FakeSpawnerControl } from "../../src/testing/FakeProcessSpawner.js"
import type { FakeProcess } from "../../src/testing/FakeProcessSpawner.js"
import { callTool, composeWith } from "../support/tools.js"

const tools = composeWith({
  executor: LocalBashExecutor.layerWith({ cwd: "/", graceMs: 100 }).pipe(
    Layer.provideMerge(FakeProcessSpawner.layer()),
    Layer.provide(Layer.merge(NodeFileSystem.layer, NodePath.layer)),
    Layer.orDie
  ),
  services: Layer.empty
})

/** The output both calls produce: colours, a `\r` progress line, an unterminated last line. */
const script = (fake: FakeProcess) => ({
  first: fake.writeStdout("\x1b[31mone\x1b[0m\n"),
  second: Effect.all([fake.writeStdout("two\n"), fake.writeStderr("warn"), fake.writeStdout("50%\r100%\n")]),
  last: Effect.all([fake.writeStderr("ing\n"), fake.writeStdout("tail"), fake.exit({ exitCode: 0, signal: null })])
})

describe("bash progress (TestClock)", () => {
  it.effect("updates come cleaned, at most one per 100 ms, coalesced; the result text is unchanged", () =>
    Effect.gen(function*() {
      const control = yield* FakeSpawnerControl
      const updates = yield* Queue.unbounded<string>()
      const call = yield* Effect.fork(callTool("bash", { command: "work", description: "Work" }, {
        onProgress: (text) => Queue.offer(updates, text)
      }))
      const fake = script(yield* control.next)
      yield* fake.first
      // The first update goes out at once.
      expect(yield* Queue.take(updates)).toBe("one\n")
      yield* fake.second
      yield* TestClock.adjust(99)
      expect(yield* Queue.poll(updates)).toEqual(Option.none())
      yield* TestClock.adjust(1)
      expect(yield* Queue.take(updates)).toBe("two\n100%\n")
      yield* fake.last
      const result = yield* Fiber.join(call)
      // The unterminated line comes with the last update, when the output ends.
      expect(Chunk.toReadonlyArray(yield* Queue.takeAll(updates))).toEqual(["warning\ntail\n"])

      const plain = yield* Effect.fork(callTool("bash", { command: "work", description: "Work" }))
      const again = script(yield* control.next)
      yield* Effect.all([again.first, again.second, again.last])
      expect(result).toEqual(yield* Fiber.join(plain))
      expect(result.text).toContain("one\ntwo\n100%\ntail")
    }).pipe(Effect.provide(tools)))

  it.effect("a callback that never returns holds an aborted call for the grace only", () =>
    Effect.gen(function*() {
      const control = yield* FakeSpawnerControl
      const updates = yield* Queue.unbounded<string>()
      const controller = new AbortController()
      const call = yield* Effect.fork(callTool("bash", { command: "work", description: "Work" }, {
        signal: controller.signal,
        onProgress: (text) => Queue.offer(updates, text).pipe(Effect.zipRight(Effect.never))
      }))
      const fake = yield* control.next
      yield* fake.writeStdout("one\n")
      expect(yield* Queue.take(updates)).toBe("one\n")
      controller.abort("stop")
      yield* TestClock.adjust(999)
      expect(yield* Fiber.poll(call)).toEqual(Option.none())
      yield* TestClock.adjust(1)
      expect(yield* Fiber.join(call)).toMatchObject({ isError: true, text: "Error: command aborted" })
    }).pipe(Effect.provide(tools)))
})
