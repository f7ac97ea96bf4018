/**
 * Repeats one piece of work for every contender, interleaved: each round runs every contender once,
 * in an order rotated per round so no contender always goes first (warm caches) or last.
 */
import type { Runner } from "../runners/Runner.js"
import { collectGarbage } from "../lib/stats.js"

/** Per contender id, one entry per round. */
export interface Samples {
  /** What `measure` returned. */
  readonly values: Record<string, Array<number>>
  /**
   * CPU time (user + system) this process spent during the round, in ms. Children's CPU is not
   * included; on a busy machine it is steadier than wall time.
   */
  readonly cpuMs: Record<string, Array<number>>
}

/** Runs `measure` `rounds` times per contender and collects what it returns. */
export const interleavedRounds = async (
  runners: ReadonlyArray<Runner>,
  rounds: number,
  measure: (runner: Runner) => Promise<number>
): Promise<Samples> => {
  const samples: Samples = {
    values: Object.fromEntries(runners.map((r) => [r.id, []])),
    cpuMs: Object.fromEntries(runners.map((r) => [r.id, []]))
  }
  for (let round = 0; round < rounds; round++) {
    for (let i = 0; i < runners.length; i++) {
      const runner = runners[(round + i) % runners.length]!
      collectGarbage()
      const cpuBefore = process.cpuUsage()
      samples.values[runner.id]!.push(await measure(runner))
      const cpu = process.cpuUsage(cpuBefore)
      samples.cpuMs[runner.id]!.push((cpu.user + cpu.system) / 1000)
    }
  }
  return samples
}
