/**
 * What a piece of work costs this node process: CPU time (user + system; children excluded) and JS
 * heap allocated. Both are far steadier than wall time on a loaded machine.
 */
import { readdirSync, readFileSync } from "node:fs"
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

// The fields of `/proc/<pid>/stat` after the command name (state first), or undefined when it is gone.
// (The spawner's own reader is internal to the library.)
const statFields = (pid: number | string): ReadonlyArray<string> | undefined => {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8")
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ")
  } catch {
    return undefined
  }
}

// The launcher is our spawner's helper: a child of this process titled `effect-bash launcher`.
const launcherPids = (): Set<number> => {
  const pids = new Set<number>()
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry) || Number(statFields(entry)?.[1]) !== process.pid) continue
    try {
      if (readFileSync(`/proc/${entry}/cmdline`, "utf8").startsWith("effect-bash launcher")) pids.add(Number(entry))
    } catch {
      // Gone meanwhile.
    }
  }
  return pids
}

// utime + stime, in clock ticks of 10 ms (Linux's USER_HZ); a process gone counts as 0.
const processCpuMs = (pid: number): number => {
  const fields = statFields(pid)
  return fields === undefined ? 0 : (Number(fields[11]) + Number(fields[12])) * 10
}

/**
 * Runs `make` and returns what it made with a reader of the CPU time used so far by the launchers
 * started meanwhile (the host's own CPU does not include theirs). `make` must have made one call
 * through the contender: a layer's launcher may start after the layer (with its helpers, or on first
 * use), and one found later could be the next contender's.
 */
export const withLaunchers = async <A>(make: () => Promise<A>): Promise<{ readonly made: A; readonly cpuMs: () => number }> => {
  const before = launcherPids()
  const made = await make()
  const started = [...launcherPids()].filter((pid) => !before.has(pid))
  return { made, cpuMs: () => started.reduce((sum, pid) => sum + processCpuMs(pid), 0) }
}
