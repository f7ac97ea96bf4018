/**
 * Repeats one piece of work for every contender, interleaved: each round runs every contender once,
 * in an order rotated per round so no contender always goes first (warm caches) or last.
 */
import type { Runner } from "../runners/Runner.js"
import { collectGarbage } from "../lib/stats.js"

/** Samples per contender id, in round order. */
export type Samples = Record<string, Array<number>>

/** Runs `measure` `rounds` times per contender and collects what it returns. */
export const interleavedRounds = async (
  runners: ReadonlyArray<Runner>,
  rounds: number,
  measure: (runner: Runner) => Promise<number>
): Promise<Samples> => {
  const samples: Samples = Object.fromEntries(runners.map((r) => [r.id, []]))
  for (let round = 0; round < rounds; round++) {
    for (let i = 0; i < runners.length; i++) {
      const runner = runners[(round + i) % runners.length]!
      collectGarbage()
      samples[runner.id]!.push(await measure(runner))
    }
  }
  return samples
}
