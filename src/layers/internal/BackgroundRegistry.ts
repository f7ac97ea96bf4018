/**
 * The bookkeeping both background runtimes share, the executor's processes and `TasksLive`'s tasks:
 * ids `<kind>-<n>` counted per kind from 1 and never reused, the owner check, a cap on how many
 * entries run at once, and eviction of the oldest-finished entries beyond a bound.
 *
 * It is plain mutable state: each caller reads or changes it inside one `Effect.sync` (or
 * `Effect.suspend`), which no other fiber can interleave with, so every method is atomic.
 *
 * @internal
 */
import * as Either from "effect/Either"
import * as Option from "effect/Option"

/**
 * What the registry needs of an entry: its id and the owner token it was started for (none: everyone's).
 */
export interface RegistryEntry {
  readonly id: string
  readonly owner: string | undefined
}

/**
 * Why an entry cannot be handed to a caller: no such id (or evicted), or another owner's.
 */
export type AccessDenied = "unknown" | "foreign"

/**
 * The bounds and the one fact about an entry the registry cannot know itself.
 */
export interface RegistryOptions<E> {
  /** How many entries may run at once ({@link BackgroundRegistry.hasCapacity}). */
  readonly maxRunning: number
  /** How many finished entries are kept; beyond it the one that finished earliest is dropped. */
  readonly maxFinished: number
  readonly isRunning: (entry: E) => boolean
}

/**
 * Entries by id, in start order.
 */
export class BackgroundRegistry<E extends RegistryEntry> {
  private readonly entries = new Map<string, E>()
  /** Ids of retained finished entries in finish order: eviction drops from the front. */
  private readonly finished: Array<string> = []
  private readonly counters = new Map<string, number>()

  constructor(private readonly options: RegistryOptions<E>) {}

  /** Consumes the next id of `kind`: an id is never handed out twice, even if its launch fails. */
  nextId(kind: string): string {
    const n = (this.counters.get(kind) ?? 0) + 1
    this.counters.set(kind, n)
    return `${kind}-${n}`
  }

  /** Whether another entry may start now. */
  get hasCapacity(): boolean {
    let running = 0
    for (const entry of this.entries.values()) if (this.options.isRunning(entry)) running++
    return running < this.options.maxRunning
  }

  /** Adds an entry, or replaces the one with the same id in its place. */
  set(entry: E): void {
    this.entries.set(entry.id, entry)
  }

  get(id: string): E | undefined {
    return this.entries.get(id)
  }

  /** The entry, if `caller` may see it: an entry with no owner is everyone's. */
  access(id: string, caller: string | undefined): Either.Either<E, AccessDenied> {
    const entry = this.entries.get(id)
    if (entry === undefined) return Either.left("unknown")
    return isVisibleTo(entry, caller) ? Either.right(entry) : Either.left("foreign")
  }

  ownerOf(id: string): Option.Option<string> {
    return Option.fromNullable(this.entries.get(id)?.owner)
  }

  /** Records that an entry finished and evicts the oldest-finished ones beyond the bound. */
  finish(id: string): void {
    this.finished.push(id)
    while (this.finished.length > this.options.maxFinished) this.entries.delete(this.finished.shift()!)
  }

  /** The entries `caller` may see, oldest first. */
  visibleTo(caller: string | undefined): ReadonlyArray<E> {
    return [...this.entries.values()].filter((entry) => isVisibleTo(entry, caller))
  }

  get running(): ReadonlyArray<E> {
    return [...this.entries.values()].filter(this.options.isRunning)
  }
}

const isVisibleTo = (entry: RegistryEntry, caller: string | undefined): boolean =>
  entry.owner === undefined || entry.owner === caller
