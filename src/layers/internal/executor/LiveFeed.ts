/**
 * Live output: what the collectors read, handed to consumers as it arrives. Each consumer gets its
 * own bounded queue; a consumer that falls behind loses chunks (counted in a lossy mark), never makes
 * the executor buffer without limit, and never slows the pipes.
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import * as Queue from "effect/Queue"
import * as Stream from "effect/Stream"
import type { BashExecutor } from "../../../services/BashExecutor.js"
import { liveOutputBufferBytes } from "../../../services/BashExecutor.js"

const end = Symbol("LiveFeed.end")
type Item = BashExecutor.LiveOutput | typeof end

// Bounds the items (lossy marks included) when the chunks are tiny.
const maxQueuedChunks = 4096

/** One consumer's queue. Offers are synchronous: they come from a collector's `append`. */
class LiveTap {
  private queuedBytes = 0
  private queuedChunks = 0
  private droppedStdout = 0
  private droppedStderr = 0

  constructor(private readonly queue: Queue.Queue<Item>, private readonly maxBytes: number) {}

  offer(stream: "stdout" | "stderr", bytes: Uint8Array): void {
    if (this.queuedBytes + bytes.length > this.maxBytes || this.queuedChunks >= maxQueuedChunks) {
      if (stream === "stdout") this.droppedStdout += bytes.length
      else this.droppedStderr += bytes.length
      return
    }
    this.flushDropped()
    this.queuedBytes += bytes.length
    this.queuedChunks++
    this.queue.unsafeOffer({ _tag: "OutputChunk", stream, bytes })
  }

  end(): void {
    this.flushDropped()
    this.queue.unsafeOffer(end)
  }

  // At most one mark between two chunks, so marks are bounded by the chunk bound.
  private flushDropped(): void {
    if (this.droppedStdout === 0 && this.droppedStderr === 0) return
    this.queue.unsafeOffer({ _tag: "OutputDropped", stdoutBytes: this.droppedStdout, stderrBytes: this.droppedStderr })
    this.droppedStdout = 0
    this.droppedStderr = 0
  }

  taken(item: BashExecutor.LiveOutput): void {
    if (item._tag !== "OutputChunk") return
    this.queuedBytes -= item.bytes.length
    this.queuedChunks--
  }

  get stream(): Stream.Stream<BashExecutor.LiveOutput> {
    return Stream.fromQueue(this.queue).pipe(
      Stream.takeWhile((item): item is BashExecutor.LiveOutput => item !== end),
      Stream.tap((item) => Effect.sync(() => this.taken(item)))
    )
  }
}

/**
 * The live output of one run: observers for its two collectors, and streams for its consumers.
 */
export class LiveFeed {
  private readonly taps = new Set<LiveTap>()
  private ended = false

  constructor(private readonly maxBytes: number = liveOutputBufferBytes) {}

  /** The observer of one stream's collector. */
  observer(stream: "stdout" | "stderr"): { readonly feed: (chunk: Uint8Array) => void } {
    return {
      feed: (chunk) => {
        for (const tap of this.taps) tap.offer(stream, chunk)
      }
    }
  }

  /** Ends every consumer's stream once what was already queued has been taken. Idempotent. */
  readonly end = Effect.sync(() => {
    if (this.ended) return
    this.ended = true
    for (const tap of this.taps) tap.end()
  })

  /**
   * A consumer registered now: it sees what arrives from now on. Closing it ends its stream after what
   * was already queued, so a consumer still reading when its run was cut short loses nothing it was owed.
   */
  readonly subscribe: Effect.Effect<{ readonly stream: Stream.Stream<BashExecutor.LiveOutput>; readonly close: Effect.Effect<void> }> =
    Effect.map(Queue.unbounded<Item>(), (queue) => {
      const tap = new LiveTap(queue, this.maxBytes)
      if (this.ended) tap.end()
      else this.taps.add(tap)
      return {
        stream: tap.stream,
        close: Effect.sync(() => {
          if (this.taps.delete(tap)) tap.end()
        })
      }
    })

  /** A stream that subscribes when it is run and unsubscribes when it ends. */
  get stream(): Stream.Stream<BashExecutor.LiveOutput> {
    return Stream.unwrapScoped(
      Effect.map(Effect.acquireRelease(this.subscribe, (subscription) => subscription.close), (s) => s.stream)
    )
  }
}
