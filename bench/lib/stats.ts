/**
 * Small timing and statistics helpers for the benchmark.
 */
import { performance } from "node:perf_hooks"

/** The median of a non-empty list (mean of the middle two for an even count). */
export const median = (values: ReadonlyArray<number>): number => {
  if (values.length === 0) throw new Error("median of an empty list")
  const sorted = [...values].sort((a, b) => a - b)
  const mid = Math.floor(sorted.length / 2)
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2
}

/** The `p`-th percentile (0–100) of a non-empty list, by the nearest rank. */
export const percentile = (values: ReadonlyArray<number>, p: number): number => {
  if (values.length === 0) throw new Error("percentile of an empty list")
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!
}

/** Runs `work` once and returns its wall time in milliseconds together with its value. */
export const timed = async <A>(work: () => Promise<A>): Promise<{ readonly ms: number; readonly value: A }> => {
  const start = performance.now()
  const value = await work()
  return { ms: performance.now() - start, value }
}

/** Collects garbage when node runs with `--expose-gc`, so one contender's garbage is not billed to the next. */
export const collectGarbage = (): void => {
  globalThis.gc?.()
}

/** Bytes per MiB. */
export const MiB = 1024 * 1024

/** Rounds to `digits` decimals for printing and JSON. */
export const round = (value: number, digits = 2): number => {
  const f = 10 ** digits
  return Math.round(value * f) / f
}
