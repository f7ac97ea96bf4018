/**
 * What one sequential `true` costs the host process, for `profile-call.ts`: CPU time and JS heap
 * allocated per call over a loop of calls.
 */
import { hostCost } from "../lib/cost.js"
import { collectGarbage } from "../lib/stats.js"
import type { Runner } from "../runners/Runner.js"

/** One contender's per-call cost over `count` sequential calls. */
export interface PerCallCost {
  readonly cpuMs: number
  /** JS heap bytes allocated per call. */
  readonly allocatedBytes: number
}

/** `count` sequential `true` through `runner`, its host cost divided by `count`. */
export const perCallCost = (count: number) => async (runner: Runner): Promise<PerCallCost> => {
  collectGarbage()
  const { cpuMs, allocatedBytes } = await hostCost(async () => {
    for (let i = 0; i < count; i++) await runner.run("true")
  })
  return { cpuMs: cpuMs / count, allocatedBytes: allocatedBytes / count }
}
