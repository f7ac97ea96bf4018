/**
 * Independent liveness checks for real-process tests: read from /proc here, not by the code under test.
 */
import type { ChildProcess } from "node:child_process"
import { once } from "node:events"
import { readdirSync, readFileSync, readlinkSync } from "node:fs"

/** One process, as /proc/<pid>/stat tells it (`tty` is the terminal's device number, 0 for none). */
export interface ProcessRow {
  readonly pid: number
  readonly ppid: number
  readonly pgid: number
  readonly sid: number
  readonly tty: number
  readonly state: string
}

/** `pid` as /proc/<pid>/stat tells it, or undefined once it is gone. */
export const processOf = (pid: number): ProcessRow | undefined => {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8")
    // The command name (in parentheses) may hold spaces and parentheses: the fields follow the last ")".
    const [state, ppid, pgid, sid, tty] = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
    return { pid, ppid: Number(ppid), pgid: Number(pgid), sid: Number(sid), tty: Number(tty), state: state! }
  } catch {
    return undefined
  }
}

/** Every process there is now (one that exits while the table is read is left out). */
export const processTable = (): ReadonlyArray<ProcessRow> =>
  readdirSync("/proc").flatMap((name) => {
    const row = /^\d+$/.test(name) ? processOf(Number(name)) : undefined
    return row === undefined ? [] : [row]
  })

/** The command line of `pid`, its arguments joined by spaces ("" once it is gone). */
export const commandLineOf = (pid: number): string => {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").filter((arg) => arg !== "").join(" ")
  } catch {
    return ""
  }
}

/** The host-death reaper's command line: bash running `reaper.sh`, whose first command ignores the signals. */
export const isReaperCommandLine = (line: string): boolean =>
  line.startsWith("bash --norc --noprofile -c ") && line.includes("\ntrap '' INT QUIT TERM HUP\n")

/** The processes there are now that are not zombies. */
export const liveProcesses = (): ReadonlyArray<ProcessRow> => processTable().filter((row) => row.state !== "Z")

/** Pids of the groups' members that are not zombies, from one reading of the table. */
export const liveMembersOf = (pgids: Iterable<number>): Array<number> => {
  const groups = new Set(pgids)
  return liveProcesses().filter((row) => groups.has(row.pgid)).map((row) => row.pid)
}

/** Pids of the group's members that are not zombies. */
export const liveMembers = (pgid: number): Array<number> => liveMembersOf([pgid])

/** The live children of `pid`. */
export const childrenOf = (pid: number): Array<number> =>
  liveProcesses().filter((row) => row.ppid === pid).map((row) => row.pid)

/** Every live descendant of `pid`. */
export const descendantsOf = (pid: number): Array<number> => {
  const processes = liveProcesses()
  const found: Array<number> = []
  let frontier = [pid]
  while (frontier.length > 0) {
    const children = processes.filter((row) => frontier.includes(row.ppid)).map((row) => row.pid)
    found.push(...children)
    frontier = children
  }
  return found
}

/** The state letter of `pid` (`S`, `T`, `Z`, …), or undefined once it is gone. */
export const stateOf = (pid: number): string | undefined => processOf(pid)?.state.charAt(0)

/** Whether `pid` is alive (zombies are dead). */
export const isAlive = (pid: number): boolean => {
  const state = stateOf(pid)
  return state !== undefined && state !== "Z"
}

/** Live processes other than this one whose environment holds `entry` (`NAME=value`). */
export const liveWithEnv = (entry: string): Array<number> =>
  liveProcesses().map((row) => row.pid).filter((pid) => {
    if (pid === process.pid) return false
    try {
      return readFileSync(`/proc/${pid}/environ`, "latin1").split("\0").includes(entry)
    } catch {
      return false // gone meanwhile, or not ours to read
    }
  })

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

/** Ends a child the test started (SIGKILL) and waits for its exit; nothing when it has already ended. */
export const killAndAwait = async (child: ChildProcess): Promise<void> => {
  if (child.exitCode !== null || child.signalCode !== null) return
  const exited = once(child, "exit")
  child.kill("SIGKILL")
  await exited
}
