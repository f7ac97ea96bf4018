/**
 * Background processes: a handle over one supervised group, and the registry that caps how many run
 * and evicts finished ones.
 *
 * @internal
 */
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type { BashExecutor } from "../../../services/BashExecutor.js"
import { mergeStreams } from "../../../services/internal/mergeStreams.js"
import type { LiveFeed } from "./LiveFeed.js"
import type { StreamCollector } from "./StreamCollector.js"
import type { Supervised } from "./supervise.js"

/**
 * Mutable bookkeeping behind one {@link BashExecutor.Process}.
 */
export interface BackgroundEntry {
  readonly id: string
  readonly owner: string | undefined
  state: BashExecutor.ProcessState
  readonly killRequest: Deferred.Deferred<void>
  readonly done: Deferred.Deferred<BashExecutor.ProcessState>
  readonly stdout: StreamCollector
  readonly stderr: StreamCollector
  readonly live: LiveFeed
}

/**
 * The terminal state of a supervised background process.
 */
export const settledState = (supervised: Supervised): BashExecutor.ProcessState => ({
  status: supervised.cause === "exit" && supervised.exit.signal === null ? "completed" : "killed",
  exitCode: supervised.exit.exitCode,
  signal: supervised.exit.signal
})

/**
 * New output of both streams, merged into one text as `mergeStreams` merges them.
 */
const readMerged = (stdout: StreamCollector, stderr: StreamCollector): BashExecutor.OutputRead => {
  const out = stdout.read()
  const err = stderr.read()
  const delta = mergeStreams(out.text, err.text)
  const stdoutSpillPath = stdout.spillPath
  const stderrSpillPath = stderr.spillPath
  return {
    delta,
    lossy: out.lossy || err.lossy,
    ...(stdoutSpillPath === undefined ? {} : { stdoutSpillPath }),
    ...(stderrSpillPath === undefined ? {} : { stderrSpillPath })
  }
}

/**
 * The public handle over an entry.
 */
export const toHandle = (entry: BackgroundEntry): BashExecutor.Process => ({
  id: entry.id,
  owner: entry.owner,
  state: Effect.sync(() => entry.state),
  done: Deferred.await(entry.done),
  readOutput: Effect.sync(() => readMerged(entry.stdout, entry.stderr)),
  output: entry.live.stream,
  kill: Effect.suspend(() =>
    entry.state.status === "running" ? Deferred.succeed(entry.killRequest, undefined).pipe(Effect.as(true)) :
      Effect.succeed(false)
  )
})

/**
 * Tracks background entries: at most `maxRunning` running, at most `maxFinished` finished kept.
 */
export class BackgroundRegistry {
  private readonly entries = new Map<string, BackgroundEntry>()
  private readonly finished: Array<string> = []
  private counter = 0

  constructor(private readonly maxRunning: number, private readonly maxFinished: number) {}

  /** Whether another process may start now. */
  get hasCapacity(): boolean {
    let running = 0
    for (const entry of this.entries.values()) if (entry.state.status === "running") running++
    return running < this.maxRunning
  }

  nextId(): string {
    return `proc-${++this.counter}`
  }

  add(entry: BackgroundEntry): void {
    this.entries.set(entry.id, entry)
  }

  /** Records a finished entry and evicts the oldest finished ones beyond the bound. */
  finish(id: string): void {
    this.finished.push(id)
    while (this.finished.length > this.maxFinished) this.entries.delete(this.finished.shift()!)
  }

  ownerOf(id: string): Option.Option<string> {
    return Option.fromNullable(this.entries.get(id)?.owner)
  }

  get running(): ReadonlyArray<BackgroundEntry> {
    return [...this.entries.values()].filter((entry) => entry.state.status === "running")
  }
}
