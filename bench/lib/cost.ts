/**
 * What a piece of work costs this node process: CPU time (user + system; children excluded) and JS
 * heap allocated. Both are far steadier than wall time on a loaded machine.
 */
import { GCProfiler } from "node:v8"

/** The work's value with its host cost. */
export interface HostCost<A> {
  readonly value: A
  readonly cpuMs: number
  /** JS heap bytes allocated (what the garbage collector has to clean up). */
  readonly allocatedBytes: number
}

const usedHeap = (stats: { readonly heapStatistics: { readonly usedHeapSize: number } }) =>
  stats.heapStatistics.usedHeapSize

/**
 * Runs `work` once. Allocation is the heap's growth plus what every collection during the run freed
 * (Node 20 has no allocation counter; `GCProfiler` reports each collection's before and after).
 */
export const hostCost = async <A>(work: () => Promise<A>): Promise<HostCost<A>> => {
  const profiler = new GCProfiler()
  const heapBefore = process.memoryUsage().heapUsed
  profiler.start()
  const cpuBefore = process.cpuUsage()
  const value = await work()
  const cpu = process.cpuUsage(cpuBefore)
  const heapAfter = process.memoryUsage().heapUsed
  const collections = profiler.stop()?.statistics ?? []
  const freed = collections.reduce((sum, gc) => sum + Math.max(0, usedHeap(gc.beforeGC) - usedHeap(gc.afterGC)), 0)
  return { value, cpuMs: (cpu.user + cpu.system) / 1000, allocatedBytes: heapAfter - heapBefore + freed }
}
