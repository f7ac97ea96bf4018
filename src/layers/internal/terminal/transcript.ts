/**
 * A terminal's whole transcript on disk, once its bounded scrollback is about to drop older output:
 * the file opens with everything the scrollback still holds (all of the output so far, as it was
 * kept: escape sequences included, the private prompt marker and full-screen drawing left out), then
 * takes every later chunk. It is a spill file of the layer's store, so it counts against the layer's
 * spill budget; past `maxBytes`, or when a write fails or the budget refuses it, it is dropped and
 * its path is no longer reported. The terminal's close removes it.
 *
 * @internal
 */
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as FiberId from "effect/FiberId"
import { Buffer } from "node:buffer"
import type { SpillFile, SpillStore } from "../executor/SpillStore.js"

/** How long a result waits for a transcript file being opened. */
const openBoundMs = 1_000

type State =
  | { readonly _tag: "None" }
  | { readonly _tag: "Open"; readonly file: SpillFile }
  | { readonly _tag: "Dropped" }

export class Transcript {
  private state: State = { _tag: "None" }
  private bytes = 0
  /** Completed once the file is open (or could not be): until then no path can be reported. */
  private opened: Deferred.Deferred<void> | undefined

  constructor(
    private readonly store: SpillStore,
    private readonly name: string,
    private readonly maxBytes: number
  ) {}

  /**
   * Takes a chunk before the scrollback does; `cuts` says the scrollback drops older text to take
   * it, and `kept` reads what it holds before that. Returns the work to finish before the next chunk.
   */
  feed(chunk: string, cuts: boolean, kept: () => string): Effect.Effect<void> | undefined {
    if (chunk.length === 0) return undefined
    switch (this.state._tag) {
      case "None": {
        if (!cuts) return undefined
        // Nothing has been dropped yet: the scrollback still holds the whole transcript.
        const head = Buffer.from(kept() + chunk, "utf8")
        this.bytes = head.length
        if (this.bytes > this.maxBytes) {
          this.state = { _tag: "Dropped" }
          return undefined
        }
        const latch = Deferred.unsafeMake<void>(FiberId.none)
        this.opened = latch
        // Opened and recorded as one step: an interruption in between would leak the handle.
        const opened = Effect.uninterruptible(Effect.tap(this.store.open(this.name), (file) =>
          Effect.sync(() => {
            this.state = { _tag: "Open", file }
          })))
        return opened.pipe(
          Effect.flatMap((file) => Effect.zipRight(Deferred.done(latch, Exit.void), file.write(head))),
          Effect.catchAll((error) => this.drop(error)),
          Effect.ensuring(Deferred.done(latch, Exit.void))
        )
      }
      case "Open": {
        const bytes = Buffer.from(chunk, "utf8")
        this.bytes += bytes.length
        if (this.bytes > this.maxBytes) return this.drop()
        return this.state.file.offer(bytes)?.pipe(Effect.catchAll((error) => this.drop(error)))
      }
      case "Dropped":
        return undefined
    }
  }

  /**
   * Waits until a file being opened is open (or failed to): a result that is about to say whether
   * the transcript is on disk must not answer while the file is half made.
   */
  get settled(): Effect.Effect<void> {
    // Bounded: a disk that does not answer must not hold a result (it then names no file).
    return Effect.suspend(() =>
      this.opened === undefined ? Effect.void : Effect.asVoid(Effect.timeoutOption(Deferred.await(this.opened), openBoundMs))
    )
  }

  /** The file's path while it holds the whole transcript so far. */
  get path(): string | undefined {
    return this.state._tag === "Open" && !this.state.file.removed ? this.state.file.path : undefined
  }

  private drop(failure?: unknown): Effect.Effect<void> {
    const previous = this.state
    this.state = { _tag: "Dropped" }
    const discard = previous._tag === "Open" ? previous.file.discard : Effect.void
    return failure === undefined
      ? discard
      : Effect.zipRight(discard, Effect.logWarning(`transcript of ${this.name} dropped`, failure))
  }

  /** Removes the file, if any: the terminal is closed. */
  get close(): Effect.Effect<void> {
    return Effect.suspend(() => this.drop())
  }
}
