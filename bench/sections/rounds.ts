/**
 * Repeats one piece of work for every contender, interleaved: each round runs every contender once,
 * in an order rotated per round so no contender always goes first (warm caches) or last.
 */
import { hostCost } from "../lib/cost.js"
import { collectGarbage } from "../lib/stats.js"
import type { Runner } from "../runners/Runner.js"

/** Per contender id, one entry per round. */
export interface Samples {
  /** What `measure` returned. */
  readonly values: Record<string, Array<number>>
  /**
   * CPU time (user + system) this process spent during the round, in ms. Children's CPU is not
   * included; on a busy machine it is steadier than wall time.
   */
  readonly cpuMs: Record<string, Array<number>>
  /** JS heap bytes this process allocated during the round. */
  readonly allocatedBytes: Record<string, Array<number>>
}

/** Runs `measure` `rounds` times per contender and collects what it returns. */
export const interleavedRounds = async (
  runners: ReadonlyArray<Runner>,
  rounds: number,
  measure: (runner: Runner) => Promise<number>
): Promise<Samples> => {
  const perRunner = () => Object.fromEntries(runners.map((r) => [r.id, [] as Array<number>]))
  const samples: Samples = { values: perRunner(), cpuMs: perRunner(), allocatedBytes: perRunner() }
  for (let round = 0; round < rounds; round++) {
    for (let i = 0; i < runners.length; i++) {
      const runner = runners[(round + i) % runners.length]!
      collectGarbage()
      const cost = await hostCost(() => measure(runner))
      samples.values[runner.id]!.push(cost.value)
      samples.cpuMs[runner.id]!.push(cost.cpuMs)
      samples.allocatedBytes[runner.id]!.push(cost.allocatedBytes)
    }
  }
  return samples
}
