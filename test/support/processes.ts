/**
 * Independent liveness checks for real-process tests: `ps` (procps), not the code under test.
 */
import { execFileSync } from "node:child_process"
import { readdirSync, readlinkSync } from "node:fs"

interface PsRow {
  readonly pid: number
  readonly pgid: number
  readonly state: string
}

const table = (): ReadonlyArray<PsRow> =>
  execFileSync("ps", ["-e", "-o", "pid=,pgid=,stat="], { encoding: "utf8" })
    .split("\n")
    .map((line) => line.trim().split(/\s+/))
    .filter((fields) => fields.length === 3)
    .map(([pid, pgid, state]) => ({ pid: Number(pid), pgid: Number(pgid), state: state! }))

/** Pids of the groups' members that are not zombies, from one `ps` snapshot. */
export const liveMembersOf = (pgids: Iterable<number>): ReadonlyArray<number> => {
  const groups = new Set(pgids)
  return table().filter((row) => groups.has(row.pgid) && !row.state.startsWith("Z")).map((row) => row.pid)
}

/** Pids of the group's members that are not zombies. */
export const liveMembers = (pgid: number): ReadonlyArray<number> => liveMembersOf([pgid])

/** The state letter of `pid` (`S`, `T`, `Z`, …), or undefined once it is gone. */
export const stateOf = (pid: number): string | undefined => table().find((row) => row.pid === pid)?.state.charAt(0)

/** Whether `pid` is alive (zombies are dead). */
export const isAlive = (pid: number): boolean =>
  table().some((row) => row.pid === pid && !row.state.startsWith("Z"))

/** The first line of `text` as a pid (tests print `$$` or `$!` first). */
export const firstPid = (text: string): number => {
  const pid = Number(text.split("\n")[0])
  if (!Number.isInteger(pid) || pid <= 0) throw new Error(`expected a pid on the first line, got ${JSON.stringify(text)}`)
  return pid
}

/** This process's open descriptors as `<fd> <target>` (`pipe:[inode]`, a path), by number, as `listFds` prints them. */
export const openFds = (): Array<string> =>
  readdirSync("/proc/self/fd").flatMap((fd) => {
    try {
      return [`${fd} ${readlinkSync(`/proc/self/fd/${fd}`)}`]
    } catch {
      return [] // the directory's own descriptor, closed by now
    }
  })

/** A command that prints each of its own descriptors as `<fd> <target>` (one without a target: the glob's own). */
export const listFds = "for fd in /proc/self/fd/*; do echo \"${fd##*/} $(readlink $fd)\"; done"
