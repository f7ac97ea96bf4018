/**
 * Whether a process group still has a live member, for many groups at once at the cost of one
 * `/proc` scan per poll round.
 *
 * `kill(-pgid, 0)` succeeds while a zombie is left, so on Linux a group it finds is confirmed in a
 * scan of `/proc`. One scan answers every group: a group asks for a new scan only when the latest
 * one is older than its own previous answer (or than its spawn). So disposing hundreds of groups,
 * each polling, costs a scan per round, not a scan per group per round.
 *
 * Reusing a scan is sound: a group with no live member in a scan taken after its spawn stays dead
 * (a new member can only be forked by a live one), and a member seen alive is at worst one round
 * stale, which only delays the answer by one poll.
 *
 * @internal
 */
import * as NodeFs from "node:fs"
import { procStatFields } from "./procStat.js"

/** A process's state, parent and group, from `/proc/<pid>/stat`. */
export interface ProcStat {
  readonly state: string
  readonly ppid: number
  readonly pgrp: number
}

/** `undefined` once the process is gone. */
export const statOf = (pid: string): ProcStat | undefined => {
  const fields = procStatFields(pid)
  return fields === undefined ? undefined : { state: fields[0] ?? "", ppid: Number(fields[1]), pgrp: Number(fields[2]) }
}

/** The pid entries of `/proc`. */
export const pidEntries = (): ReadonlyArray<string> =>
  NodeFs.readdirSync("/proc").filter((entry) => entry.charCodeAt(0) >= 48 && entry.charCodeAt(0) <= 57)

/** The `code` of a Node system error, if it has one. */
export const errnoCode = (error: unknown): string | undefined =>
  typeof error === "object" && error !== null && "code" in error && typeof error.code === "string"
    ? error.code
    : undefined

interface Scan {
  readonly generation: number
  /** Groups with a member that is neither a zombie nor dead. */
  readonly liveGroups: ReadonlySet<number>
}

let latest: Scan = { generation: 0, liveGroups: new Set() }

const scan = (): Scan => {
  const liveGroups = new Set<number>()
  for (const entry of pidEntries()) {
    const stat = statOf(entry)
    if (stat !== undefined && stat.state !== "Z" && stat.state !== "X") liveGroups.add(stat.pgrp)
  }
  latest = { generation: latest.generation + 1, liveGroups }
  return latest
}

/** `kill(-pgid, 0)`: `false` when no member is left, not even a zombie. */
const groupExists = (pgid: number): boolean => {
  // After a clean exit the answer is nearly always ESRCH, thrown: skip its stack trace (most of its cost).
  const stackTraceLimit = Error.stackTraceLimit
  Error.stackTraceLimit = 0
  try {
    process.kill(-pgid, 0)
    return true
  } catch (error) {
    return errnoCode(error) === "EPERM"
  } finally {
    Error.stackTraceLimit = stackTraceLimit
  }
}

/**
 * The liveness check of group `pgid`, made when the group is spawned (no earlier scan may answer it).
 */
export const groupLiveness = (pgid: number): () => boolean => {
  let answeredAt = latest.generation
  return () => {
    if (!groupExists(pgid)) return false
    if (process.platform !== "linux") return true
    const current = latest.generation > answeredAt ? latest : scan()
    answeredAt = current.generation
    return current.liveGroups.has(pgid)
  }
}
