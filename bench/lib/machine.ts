/**
 * A description of the machine the numbers came from.
 */
import { cpus, release, totalmem } from "node:os"
import { MiB } from "./stats.js"

/** Where a run happened. */
export interface Machine {
  readonly cpuModel: string
  readonly cpuCount: number
  readonly totalMemoryMiB: number
  readonly os: string
  readonly node: string
}

/** Reads the current machine's description. */
export const describeMachine = (): Machine => ({
  cpuModel: cpus()[0]?.model.trim() ?? "unknown",
  cpuCount: cpus().length,
  totalMemoryMiB: Math.round(totalmem() / MiB),
  os: `${process.platform} ${release()} ${process.arch}`,
  node: process.version
})
