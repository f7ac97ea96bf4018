/**
 * Background processes: the bookkeeping of one supervised group and the handle over it (the registry
 * that caps and evicts them is the shared `BackgroundRegistry`).
 *
 * @internal
 */
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
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
