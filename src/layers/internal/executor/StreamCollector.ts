/**
 * One output stream's collector: keeps the tail in memory within a byte budget and, on the first
 * overflow, spills the whole stream (from byte 0) to a file, up to a spill cap.
 *
 * A single reader appends; reads are synchronous snapshots, so they are safe from any fiber.
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import type { BashExecutor } from "../../../services/BashExecutor.js"
import type { SpillFile, SpillStore } from "./SpillStore.js"
import { alignStart, completeEnd, decodeUtf8 } from "./utf8.js"

/**
 * A consuming read of new bytes, decoded.
 */
export interface CollectorRead {
  readonly text: string
  /** Bytes between the previous read and this one were dropped from memory. */
  readonly lossy: boolean
}

type SpillState =
  | { readonly _tag: "None" }
  | { readonly _tag: "Open"; readonly file: SpillFile }
  | { readonly _tag: "Finished"; readonly file: SpillFile | undefined }
  | { readonly _tag: "Abandoned" }

// No copy for a single chunk.
const concatBytes = (chunks: ReadonlyArray<Uint8Array>): Uint8Array => {
  if (chunks.length === 1) return chunks[0]!
  let size = 0
  for (const chunk of chunks) size += chunk.length
  const out = new Uint8Array(size)
  let offset = 0
  for (const chunk of chunks) {
    out.set(chunk, offset)
    offset += chunk.length
  }
  return out
}

/**
 * Collects one stream.
 */
export class StreamCollector {
  private chunks: Array<Uint8Array> = []
  private buffered = 0
  private total = 0
  private cursor = 0
  private ended = false
  private spill: SpillState = { _tag: "None" }

  constructor(
    readonly stream: "stdout" | "stderr",
    private readonly budget: number,
    private readonly maxSpillBytes: number,
    private readonly store: SpillStore,
    /** Sees every chunk of the whole stream as it arrives (e.g. a runner's denial watch). */
    private readonly observer?: { readonly feed: (chunk: Uint8Array) => void }
  ) {}

  /** Adds a chunk; opens, feeds or abandons the spill file as the totals require. */
  append(chunk: Uint8Array): Effect.Effect<void> {
    return this.take(chunk, false) ?? Effect.void
  }

  /**
   * {@link append} for a pipe reader: the chunk is taken at once, and the spill work it needs, if
   * any, is returned (to complete before the next chunk); most chunks need none.
   */
  offer(chunk: Uint8Array): Effect.Effect<void> | undefined {
    return this.take(chunk, true)
  }

  /** `eager`: an open spill file is written now, not when the returned effect runs. */
  private take(chunk: Uint8Array, eager: boolean): Effect.Effect<void> | undefined {
    if (chunk.length === 0) return undefined
    this.observer?.feed(chunk)
    const before = this.total
    const spillWork = this.spillFor(chunk, before, eager)
    this.total += chunk.length
    this.chunks.push(chunk)
    this.buffered += chunk.length
    while (this.chunks.length > 1 && this.buffered - this.chunks[0]!.length >= this.budget) {
      this.buffered -= this.chunks.shift()!.length
    }
    return spillWork
  }

  private spillFor(chunk: Uint8Array, before: number, eager: boolean): Effect.Effect<void> | undefined {
    const after = before + chunk.length
    switch (this.spill._tag) {
      case "None": {
        if (after <= this.budget) return undefined
        if (after > this.maxSpillBytes) {
          this.spill = { _tag: "Abandoned" }
          return undefined
        }
        // Nothing has been evicted yet: the buffer still holds bytes 0..before.
        const head = concatBytes(this.chunks)
        // Opened and recorded as one step: an interruption in between would leak the handle, as
        // `finish` only closes a file it knows.
        const opened = this.store.open(this.stream).pipe(
          Effect.tap((file) =>
            Effect.sync(() => {
              this.spill = { _tag: "Open", file }
            })
          ),
          Effect.uninterruptible
        )
        return opened.pipe(
          Effect.flatMap((file) =>
            (head.length === 0 ? Effect.void : file.write(head)).pipe(Effect.zipRight(file.write(chunk)))
          ),
          Effect.catchAll((error) => this.abandon(error))
        )
      }
      case "Open": {
        const { file } = this.spill
        if (after > this.maxSpillBytes) return this.abandon()
        const work = eager ? file.offer(chunk) : file.write(chunk)
        return work === undefined ? undefined : work.pipe(Effect.catchAll((error) => this.abandon(error)))
      }
      default:
        return undefined
    }
  }

  /** Drops the spill file: past the cap (no `failure`), or because writing it failed. */
  private abandon(failure?: unknown): Effect.Effect<void> {
    const previous = this.spill
    this.spill = { _tag: "Abandoned" }
    const discard = previous._tag === "Open" ? previous.file.discard : Effect.void
    return discard.pipe(
      Effect.zipRight(
        failure === undefined
          ? Effect.void
          : Effect.logWarning("spill file abandoned", failure).pipe(Effect.annotateLogs("stream", this.stream))
      )
    )
  }

  /** The spill file's path while it is (or was successfully) complete so far and still on disk. */
  get spillPath(): string | undefined {
    switch (this.spill._tag) {
      case "Open":
        return this.spill.file.path
      case "Finished":
        return this.spill.file === undefined || this.spill.file.removed ? undefined : this.spill.file.path
      default:
        return undefined
    }
  }

  private window(): Uint8Array {
    return concatBytes(this.chunks)
  }

  /**
   * Consuming read: everything new since the last read, never splitting a character. Only the last
   * `budget` bytes count as kept, whatever chunking left in the buffer, so loss is deterministic.
   */
  read(): CollectorRead {
    const bufferStart = this.total - this.buffered
    const keptStart = this.total - Math.min(this.buffered, this.budget)
    const lossy = this.cursor < keptStart
    const from = Math.max(this.cursor, keptStart)
    const bytes = this.window().subarray(from - bufferStart)
    const start = lossy ? alignStart(bytes, 0) : 0
    const end = this.ended ? bytes.length : completeEnd(bytes)
    this.cursor = from + Math.max(start, end)
    return { text: end > start ? decodeUtf8(bytes.subarray(start, end)) : "", lossy }
  }

  /** Marks end of stream, closes the spill file and returns the collected output. */
  get finish(): Effect.Effect<BashExecutor.CollectedOutput> {
    return Effect.suspend(() => {
      this.ended = true
      const spill = this.spill
      const finished = (file: SpillFile | undefined) => {
        this.spill = { _tag: "Finished", file }
        return this.collected(this.spillPath)
      }
      if (spill._tag !== "Open") return Effect.succeed(finished(spill._tag === "Finished" ? spill.file : undefined))
      return Effect.map(spill.file.finish, (ok) => finished(ok ? spill.file : undefined))
    })
  }

  private collected(spillPath: string | undefined): BashExecutor.CollectedOutput {
    const truncated = this.total > this.budget
    const window = this.window()
    const tail = truncated ? window.subarray(alignStart(window, window.length - this.budget)) : window
    const text = decodeUtf8(tail)
    return spillPath === undefined ? { text, truncated } : { text, truncated, spillPath }
  }
}
