import * as NodeFs from "node:fs"

/**
 * The fields of `/proc/<pid>/stat` after `comm`, starting with the state (`fields[0]`): ppid is
 * `fields[1]`, pgrp `fields[2]`, start time `fields[19]`. `comm` may hold spaces and parentheses, so
 * the fields start after its last `)`. `undefined` when the process is gone (or off Linux).
 *
 * @internal
 */
export const procStatFields = (pid: string): ReadonlyArray<string> | undefined => {
  try {
    const stat = NodeFs.readFileSync(`/proc/${pid}/stat`, "latin1")
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ")
  } catch {
    return undefined
  }
}

const stateOf = (pid: number): string | undefined => procStatFields(String(pid))?.[0]

/**
 * Whether the process `pid` is stopped (by a signal, or traced).
 *
 * @internal
 */
export const isStopped = (pid: number): boolean => {
  const state = stateOf(pid)
  return state === "T" || state === "t"
}

/**
 * Whether the process `pid` is gone: no entry, a zombie, or dead.
 *
 * @internal
 */
export const isGone = (pid: number): boolean => {
  const state = stateOf(pid)
  return state === undefined || state === "Z" || state === "X"
}
