/**
 * The bound on the total size of one layer's spill files on disk (`maxSpillTotalBytes`).
 *
 * A file being written is never removed: it belongs to a run still producing it. Finished files are
 * removed oldest-finished first, and only when a newer spill needs the room. When the files still
 * being written fill the budget on their own, the write that would cross it is refused: that stream
 * stops spilling, as one past `maxSpillBytes` does.
 *
 * A file's bytes count until the file is gone from disk ({@link SpillBudget.gone}), not when its
 * removal is decided: a write admitted meanwhile would put both on disk at once.
 *
 * @internal
 */
import * as Data from "effect/Data"

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
  state: "writing" | "finished" | "removing" | "removed"
}

/**
 * What {@link SpillBudget.reserve} decided: the bytes are counted; they can never fit beside the
 * files being written; or they fit once the files at `paths` are removed (then ask again).
 */
export type Reservation =
  | { readonly _tag: "Reserved" }
  | { readonly _tag: "Refused" }
  | { readonly _tag: "RemoveFirst"; readonly paths: ReadonlyArray<string> }

const reserved: Reservation = { _tag: "Reserved" }
const refused: Reservation = { _tag: "Refused" }

/**
 * Accounting for one layer; every method is synchronous, so no two fibers interleave inside one.
 */
export class SpillBudget {
  /** Bytes of every file not yet gone. */
  private total = 0
  private finishedBytes = 0
  private removingBytes = 0
  private readonly finishedShares: Array<SpillShare> = []
  private readonly removing = new Map<string, SpillShare>()

  constructor(readonly limit: number) {}

  open(path: string): SpillShare {
    return { path, bytes: 0, state: "writing" }
  }

  /**
   * Counts `size` more bytes for `share` when they fit on disk now. Otherwise, when removing finished
   * files (oldest first) makes room, marks them for removal and answers every path whose removal is
   * pending: the caller removes them, reports them {@link gone}, and asks again.
   */
  reserve(share: SpillShare, size: number): Reservation {
    const writingBytes = this.total - this.finishedBytes - this.removingBytes
    if (writingBytes + size > this.limit) return refused
    if (this.total + size <= this.limit) {
      share.bytes += size
      this.total += size
      return reserved
    }
    while (this.total - this.removingBytes + size > this.limit) this.startRemoval(this.finishedShares[0]!)
    return { _tag: "RemoveFirst", paths: [...this.removing.keys()] }
  }

  /** The file is complete: it may now make room for newer ones. */
  finish(share: SpillShare): void {
    if (share.state !== "writing") return
    share.state = "finished"
    this.finishedShares.push(share)
    this.finishedBytes += share.bytes
  }

  /** The file is to be removed (evicted, abandoned or failed); its bytes count until it is {@link gone}. */
  startRemoval(share: SpillShare): void {
    if (share.state === "removing" || share.state === "removed") return
    if (share.state === "finished") {
      this.finishedShares.splice(this.finishedShares.indexOf(share), 1)
      this.finishedBytes -= share.bytes
    }
    share.state = "removing"
    this.removing.set(share.path, share)
    this.removingBytes += share.bytes
  }

  /** These files are no longer on disk: their bytes are free again. */
  gone(paths: ReadonlyArray<string>): void {
    for (const path of paths) {
      const share = this.removing.get(path)
      if (share === undefined) continue
      this.removing.delete(path)
      share.state = "removed"
      this.removingBytes -= share.bytes
      this.total -= share.bytes
    }
  }
}
