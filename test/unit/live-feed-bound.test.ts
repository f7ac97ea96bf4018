/**
 * The live-output feed behind `BashExecutor.Process.output`: bounded, and marking what it dropped.
 * Live output against real processes is in test/process/executor-streaming.test.ts.
 */
import { describe, expect, it } from "@effect/vitest"
import { Chunk, Effect, Stream } from "effect"
import { LiveFeed } from "../../src/layers/internal/executor/LiveFeed.js"

const decoder = new TextDecoder()

describe("LiveFeed", () => {
  it.effect("past its budget it drops new chunks and marks them before the next one delivered", () =>
    Effect.scoped(Effect.gen(function*() {
      const feed = new LiveFeed(4)
      const output = yield* Effect.acquireRelease(feed.subscribe, (subscription) => subscription.close)
      const bytes = (text: string) => new TextEncoder().encode(text)
      feed.observer("stdout").feed(bytes("ab"))
      feed.observer("stderr").feed(bytes("cd"))
      feed.observer("stdout").feed(bytes("ef"))
      feed.observer("stderr").feed(bytes("g"))
      // Only the two chunks are queued; taking them frees the budget.
      const first = Chunk.toReadonlyArray(yield* Stream.runCollect(Stream.take(output.stream, 2)))
      expect(first.map((item) => item._tag === "OutputChunk" && decoder.decode(item.bytes))).toEqual(["ab", "cd"])
      feed.observer("stdout").feed(bytes("h"))
      feed.observer("stdout").feed(bytes("i"))
      yield* feed.end
      const rest = Chunk.toReadonlyArray(yield* Stream.runCollect(output.stream))
      expect(rest).toEqual([
        { _tag: "OutputDropped", stdoutBytes: 2, stderrBytes: 1 },
        { _tag: "OutputChunk", stream: "stdout", bytes: bytes("h") },
        { _tag: "OutputChunk", stream: "stdout", bytes: bytes("i") }
      ])
    })))
})
