/**
 * The PTY's events on their way to a terminal's pump, held within a byte budget: once the held
 * output reaches it, the PTY is not read (its writer blocks on the kernel's full buffer, as on a
 * pipe) until the pump has taken it down to half. So a flood the pump cannot keep up with waits in
 * the kernel, not in the host's memory: the inbox holds less than the budget plus one chunk. Events
 * keep their order; the exit comes after every chunk before it.
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import * as Queue from "effect/Queue"
import { Buffer } from "node:buffer"
import type { PtySpawner } from "../../../services/PtySpawner.js"

/** What the pump receives from the PTY's callbacks. */
export type PtyEvent =
  | { readonly _tag: "data"; readonly chunk: string; readonly bytes: number }
  | { readonly _tag: "exit"; readonly exit: PtySpawner.Exit }

export class PtyInbox {
  private held = 0
  private paused = false
  /** A resume under way: until it is done, output may still wait in the kernel. */
  private resuming = false
  private resume: Effect.Effect<void> = Effect.void
  /** The most output held at once, in bytes. */
  highWater = 0
  /** How many times the PTY was stopped. */
  pauses = 0

  private constructor(private readonly queue: Queue.Queue<PtyEvent>, readonly maxBytes: number) {}

  static make(maxBytes: number): Effect.Effect<PtyInbox> {
    return Effect.map(Queue.unbounded<PtyEvent>(), (queue) => new PtyInbox(queue, maxBytes))
  }

  /** The PTY's `onData`: whether it may go on reading. */
  readonly offerData = (chunk: string): boolean => {
    const bytes = Buffer.byteLength(chunk, "utf8")
    Queue.unsafeOffer(this.queue, { _tag: "data", chunk, bytes })
    this.held += bytes
    if (this.held > this.highWater) this.highWater = this.held
    if (this.held >= this.maxBytes && !this.paused) {
      this.paused = true
      this.pauses++
    }
    return !this.paused
  }

  /** The PTY's `onExit`. */
  readonly offerExit = (exit: PtySpawner.Exit): void => {
    Queue.unsafeOffer(this.queue, { _tag: "exit", exit })
  }

  /** How to read the PTY again (its `resume`), once it is started. */
  connect(resume: Effect.Effect<void>): void {
    this.resume = resume
  }

  /** Output between the PTY and the terminal: held here, or in the kernel while the PTY is not read. */
  get pending(): boolean {
    return this.held > 0 || this.paused || this.resuming
  }

  /** The next event, to hand to {@link settle} once it is taken in. */
  get take(): Effect.Effect<PtyEvent> {
    return Queue.take(this.queue)
  }

  /** `event` is in the terminal now: its bytes leave the budget, and the PTY is read again at half. */
  settle(event: PtyEvent): Effect.Effect<void> {
    return Effect.suspend(() => {
      if (event._tag === "exit") return Effect.void
      this.held -= event.bytes
      if (!this.paused || this.held > this.maxBytes / 2) return Effect.void
      // Unpaused first: the resume may deliver at once, and a chunk then may pause the PTY again.
      this.paused = false
      this.resuming = true
      return Effect.ensuring(this.resume, Effect.sync(() => {
        this.resuming = false
      }))
    })
  }
}
