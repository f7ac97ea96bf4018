/**
 * The bound on the total size of one layer's spill files (`maxSpillTotalBytes`).
 *
 * A file being written is never removed: it belongs to a run still producing it. Finished files are
 * removed oldest-finished first, and only when a newer spill needs the room. When the files still
 * being written fill the budget on their own, the write that would cross it is refused: that stream
 * stops spilling, as one past `maxSpillBytes` does.
 *
 * @internal
 */
import { Data } from "effect"

/**
 * The files still being written fill `maxSpillTotalBytes`.
 */
export class SpillBudgetExceeded extends Data.TaggedError("SpillBudgetExceeded")<{ readonly limit: number }> {
  override get message() {
    return `spill files being written already fill maxSpillTotalBytes (${this.limit})`
  }
}

/**
 * One file's share of the budget.
 */
export interface SpillShare {
  readonly path: string
  bytes: number
  state: "writing" | "finished" | "removed"
}

/**
 * Accounting for one layer; every method is synchronous, so no two fibers interleave inside one.
 */
export class SpillBudget {
  private total = 0
  private finishedBytes = 0
  private readonly finishedShares: Array<SpillShare> = []

  constructor(readonly limit: number) {}

  open(path: string): SpillShare {
    return { path, bytes: 0, state: "writing" }
  }

  /**
   * Counts `size` more bytes for `share`, first removing finished files (oldest first) as needed.
   * Returns the paths to delete, or `undefined` (nothing changed) when the bytes cannot fit.
   */
  reserve(share: SpillShare, size: number): ReadonlyArray<string> | undefined {
    if (this.total - this.finishedBytes + size > this.limit) return undefined
    const evicted: Array<string> = []
    while (this.total + size > this.limit) {
      const oldest = this.finishedShares.shift()!
      this.release(oldest)
      evicted.push(oldest.path)
    }
    share.bytes += size
    this.total += size
    return evicted
  }

  /** The file is complete: it may now make room for newer ones. */
  finish(share: SpillShare): void {
    if (share.state !== "writing") return
    share.state = "finished"
    this.finishedShares.push(share)
    this.finishedBytes += share.bytes
  }

  /** The file is gone (evicted, abandoned or failed): its bytes are free again. */
  release(share: SpillShare): void {
    if (share.state === "removed") return
    if (share.state === "finished") {
      const index = this.finishedShares.indexOf(share)
      if (index >= 0) this.finishedShares.splice(index, 1)
      this.finishedBytes -= share.bytes
    }
    share.state = "removed"
    this.total -= share.bytes
  }
}
