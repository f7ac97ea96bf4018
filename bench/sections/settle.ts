/**
 * Work item (e): how long after its timeout a call settles.
 */
import { rawRunWithTimeout } from "../runners/raw.js"
import type { OursRunner } from "../runners/ours.js"
import { timed } from "../lib/stats.js"

/** Wall time in ms of one timed-out call through our executor; fails if the call did not time out. */
export const oursSettle = async (ours: OursRunner, command: string, timeoutMs: number): Promise<number> => {
  const { ms, value } = await timed(() => ours.execute({ command, timeoutMs }))
  if (!value.timedOut) throw new Error(`"${command}" did not time out: ${JSON.stringify(value)}`)
  return ms
}

/** Wall time in ms of the same call through the raw baseline (TERM to the group, KILL after `graceMs`). */
export const rawSettle = async (command: string, timeoutMs: number, graceMs: number): Promise<number> => {
  const { ms } = await timed(() => rawRunWithTimeout(command, timeoutMs, graceMs))
  return ms
}
