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
