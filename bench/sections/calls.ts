/**
 * Per-call wall times, contenders interleaved: each round runs a block of calls of every contender,
 * in an order rotated per round, and keeps every call's time, so a median and a tail come from the
 * same calls.
 */
import { performance } from "node:perf_hooks"
import { collectGarbage, median, percentile, round } from "../lib/stats.js"
import type { Runner } from "../runners/Runner.js"

/** Wall time in ms of every call of `command`, per contender id. */
export type CallTimes = Record<string, Array<number>>

/** `rounds` × `block` sequential calls of `command` per contender. */
export const interleavedCalls = async (
  runners: ReadonlyArray<Runner>,
  rounds: number,
  block: number,
  command = "true"
): Promise<CallTimes> => {
  const times: CallTimes = Object.fromEntries(runners.map((r) => [r.id, [] as Array<number>]))
  for (let r = 0; r < rounds; r++) {
    for (let i = 0; i < runners.length; i++) {
      const runner = runners[(r + i) % runners.length]!
      collectGarbage()
      for (let call = 0; call < block; call++) {
        const start = performance.now()
        await runner.run(command)
        times[runner.id]!.push(performance.now() - start)
      }
    }
  }
  return times
}

/** A contender's per-call wall time: median and 90th percentile, in ms, over `calls` calls. */
export interface CallSpread {
  readonly medianMs: number
  readonly p90Ms: number
  readonly calls: number
}

/** The spread of one contender's call times. */
export const spreadOf = (times: ReadonlyArray<number>): CallSpread => ({
  medianMs: round(median(times), 3),
  p90Ms: round(percentile(times, 90), 3),
  calls: times.length
})
