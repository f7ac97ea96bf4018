/**
 * Work item (h): what one sequential `true` costs the host process — CPU time (user + system, the
 * children's excluded) and JS heap allocated — for each contender. Both are far steadier than wall
 * time on a loaded machine.
 */
import { GCProfiler } from "node:v8"
import type { Runner } from "../runners/Runner.js"
import { collectGarbage } from "../lib/stats.js"

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
