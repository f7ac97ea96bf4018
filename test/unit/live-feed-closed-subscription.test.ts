/**
 * Live output consumers: closing a subscription (its run's scope closed) ends the consumer's stream
 * after what was already queued for it, so output read before a run was cut short is never lost.
 */
import { describe, expect, it } from "@effect/vitest"
import { Chunk, Effect, Stream } from "effect"
import { LiveFeed } from "../../src/layers/internal/executor/LiveFeed.js"

const text = (items: Chunk.Chunk<{ readonly _tag: string; readonly bytes?: Uint8Array }>) =>
  Chunk.toReadonlyArray(items).map((item) => new TextDecoder().decode(item.bytes)).join("")

describe("LiveFeed", () => {
  it.effect("a closed subscription still yields what was queued for it, then ends", () =>
    Effect.gen(function*() {
      const feed = new LiveFeed()
      const subscription = yield* feed.subscribe
      feed.observer("stdout").feed(new TextEncoder().encode("read before "))
      feed.observer("stdout").feed(new TextEncoder().encode("the close"))
      yield* subscription.close
      feed.observer("stdout").feed(new TextEncoder().encode(" (after: not delivered)"))
      expect(text(yield* Stream.runCollect(subscription.stream))).toBe("read before the close")
    }))

  it.effect("a subscription closed after its feed ended still yields its output, once", () =>
    Effect.gen(function*() {
      const feed = new LiveFeed()
      const subscription = yield* feed.subscribe
      feed.observer("stderr").feed(new TextEncoder().encode("last"))
      yield* feed.end
      yield* subscription.close
      expect(text(yield* Stream.runCollect(subscription.stream))).toBe("last")
    }))
})
