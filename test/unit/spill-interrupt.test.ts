/**
 * An interruption that lands right after a spill resource is acquired, before it is recorded: the
 * resource must still be released. The fakes interrupt their own caller while acquiring (the signal
 * is delivered as soon as the acquisition returns), so the window is hit every time, with no timing.
 */
import * as FileSystem from "@effect/platform/FileSystem"
import { SystemError } from "@effect/platform/Error"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Exit, Fiber, Layer, Scope } from "effect"
import { makeSpillStore } from "../../src/layers/internal/executor/SpillStore.js"
import type { SpillFile, SpillStore } from "../../src/layers/internal/executor/SpillStore.js"
import { StreamCollector } from "../../src/layers/internal/executor/StreamCollector.js"
import * as NodePath from "@effect/platform-node/NodePath"

/** Returns `value` with an interrupt of the calling fiber pending, delivered once it may be. */
const returnThenInterrupted = <A>(value: A) =>
  Effect.withFiberRuntime<A>((fiber) => {
    fiber.unsafeInterruptAsFork(fiber.id())
    return Effect.succeed(value)
  }).pipe(Effect.uninterruptible)

describe("interrupted between acquiring and recording a spill resource", () => {
  it.effect("the spill directory is still removed with the layer, and later spills still work", () =>
    Effect.gen(function*() {
      const removed: Array<string> = []
      const opened: Array<string> = []
      let made = 0
      const fsLayer = FileSystem.layerNoop({
        readDirectory: () => Effect.succeed([]),
        makeTempDirectory: () => {
          made++
          return returnThenInterrupted("/spill/dir-1")
        },
        remove: (path) => Effect.sync(() => void removed.push(path)),
        open: (path) =>
          Effect.sync(() => void opened.push(path)).pipe(
            Effect.zipRight(Effect.fail(new SystemError({ reason: "Unknown", module: "FileSystem", method: "open" })))
          )
      })
      const scope = yield* Scope.make()
      const store = yield* makeSpillStore({ keep: false, maxTotalBytes: 1 << 20 }).pipe(
        Scope.extend(scope),
        Effect.provide(Layer.merge(fsLayer, NodePath.layer))
      )
      const first = yield* Fiber.await(yield* Effect.fork(store.open("stdout")))
      expect(Exit.isInterrupted(first)).toBe(true)
      // The interruption was not cached: the next spill gets past the directory to its own open.
      const second = yield* Fiber.await(yield* Effect.fork(store.open("stderr")))
      expect(Exit.isFailure(second) && !Exit.isInterrupted(second)).toBe(true)
      expect(made).toBe(1)
      expect(opened).toHaveLength(1)
      yield* Scope.close(scope, Exit.void)
      expect(removed).toEqual(["/spill/dir-1"])
    }))

  it.effect("the spill file a collector opened is still closed when the collector finishes", () =>
    Effect.gen(function*() {
      const events: Array<string> = []
      const file: SpillFile = {
        path: "/spill/stdout.log",
        write: () => Effect.sync(() => void events.push("write")),
        offer: () => {
          events.push("write")
          return undefined
        },
        finish: Effect.sync(() => {
          events.push("finish")
          return true
        }),
        discard: Effect.sync(() => void events.push("discard")),
        removed: false
      }
      const store: SpillStore = { open: () => returnThenInterrupted(file) }
      const collector = new StreamCollector("stdout", 4, 1 << 20, store)
      const fiber = yield* Effect.fork(collector.append(new Uint8Array(16)))
      const exit = yield* Fiber.await(fiber)
      expect(Exit.isInterrupted(exit)).toBe(true)
      const output = yield* collector.finish
      expect(events).toEqual(["finish"])
      expect(output.spillPath).toBe("/spill/stdout.log")
    }))
})
