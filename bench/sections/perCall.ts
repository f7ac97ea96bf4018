/**
 * Work item (h): what one sequential `true` costs the host process — CPU time (user + system, the
 * children's excluded) and JS heap allocated — for each contender. Both are far steadier than wall
 * time on a loaded machine.
 */
import { GCProfiler } from "node:v8"
import type { PerCall } from "../lib/results.js"
import { collectGarbage, median, round } from "../lib/stats.js"
import type { Runner } from "../runners/Runner.js"

/** One contender's per-call cost over `count` sequential calls. */
export interface PerCallCost {
  readonly cpuMs: number
  /** JS heap bytes allocated per call (what the garbage collector has to clean up). */
  readonly allocatedBytes: number
}

const usedHeap = (stats: { readonly heapStatistics: { readonly usedHeapSize: number } }) =>
  stats.heapStatistics.usedHeapSize

/**
 * Allocation is the heap's growth plus what every collection during the run freed (Node 20 has no
 * allocation counter; `GCProfiler` reports each collection's before and after).
 */
export const perCallCost = (count: number) => async (runner: Runner): Promise<PerCallCost> => {
  collectGarbage()
  const profiler = new GCProfiler()
  const heapBefore = process.memoryUsage().heapUsed
  profiler.start()
  const cpuBefore = process.cpuUsage()
  for (let i = 0; i < count; i++) await runner.run("true")
  const cpu = process.cpuUsage(cpuBefore)
  const heapAfter = process.memoryUsage().heapUsed
  const collections = profiler.stop()?.statistics ?? []
  const freed = collections.reduce((sum, gc) => sum + Math.max(0, usedHeap(gc.beforeGC) - usedHeap(gc.afterGC)), 0)
  return { cpuMs: (cpu.user + cpu.system) / 1000 / count, allocatedBytes: (heapAfter - heapBefore + freed) / count }
}

/** (h) `perCallCost` for every contender, interleaved: `rounds` rounds of `count` calls each. */
export const measurePerCall = async (
  runners: ReadonlyArray<Runner>,
  rounds: number,
  count: number
): Promise<Array<PerCall>> => {
  const samples = new Map(runners.map((runner) => [runner.id, [] as Array<PerCallCost>]))
  for (let round = 0; round < rounds; round++) {
    for (let i = 0; i < runners.length; i++) {
      const runner = runners[(round + i) % runners.length]!
      samples.get(runner.id)!.push(await perCallCost(count)(runner))
    }
  }
  const medians = runners.map((runner) => {
    const costs = samples.get(runner.id)!
    return {
      id: runner.id,
      cpuMs: median(costs.map((c) => c.cpuMs)),
      allocatedKiB: median(costs.map((c) => c.allocatedBytes)) / 1024
    }
  })
  const raw = medians.find((m) => m.id === "raw")!
  return medians.map((m) => ({
    id: m.id,
    cpuMs: round(m.cpuMs, 3),
    cpuRatioToRaw: round(m.cpuMs / raw.cpuMs, 2),
    allocatedKiB: round(m.allocatedKiB, 1),
    allocatedRatioToRaw: round(m.allocatedKiB / raw.allocatedKiB, 1)
  }))
}
