import * as NodeFs from "node:fs"

/**
 * {@link procStatFields} over `read` (`fs.readFileSync`): self-contained, so the launcher's program,
 * which cannot import, takes the same parser as its source text.
 *
 * @internal
 */
export const procStatFieldsWith =
  (read: (path: string, encoding: "latin1") => string) => (pid: string): ReadonlyArray<string> | undefined => {
    try {
      const stat = read(`/proc/${pid}/stat`, "latin1")
      return stat.slice(stat.lastIndexOf(")") + 2).split(" ")
    } catch {
      return undefined
    }
  }

/**
 * The fields of `/proc/<pid>/stat` after `comm`, starting with the state (`fields[0]`): ppid is
 * `fields[1]`, pgrp `fields[2]`, start time `fields[19]`. `comm` may hold spaces and parentheses, so
 * the fields start after its last `)`. `undefined` when the process is gone (or off Linux).
 *
 * @internal
 */
export const procStatFields = procStatFieldsWith(NodeFs.readFileSync)
