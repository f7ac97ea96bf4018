/**
 * An interruption that lands right after a spill resource is acquired, before it is recorded: the
 * resource must still be released. The fakes interrupt their own caller while acquiring (the signal
 * is delivered as soon as the acquisition returns), so the window is hit every time, with no timing.
 */
import { FileSystem } from "@effect/platform"
import { SystemError } from "@effect/platform/Error"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Exit, Fiber, Layer, Scope } from "effect"
import { makeSpillStore } from "../src/layers/local/SpillStore.js"
import { NodePath } from "@effect/platform-node"

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
})
