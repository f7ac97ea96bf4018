/**
 * What `/proc` says about a terminal: its foreground process group (the `tpgid` of the session
 * leader's stat), whether that group waits for terminal input (its leader asleep in a read of the
 * PTY, in select/poll with the PTY as its stdin, or in epoll on an instance that watches the PTY for
 * input), and every process of the terminal — its
 * session, the processes holding its PTY (children that left with `setsid` keep it as their stdio)
 * and their descendants. Off Linux every answer is "nothing known".
 *
 * @internal
 */
import * as NodeFs from "node:fs"
import { procStatFields } from "../spawner/procStat.js"

const readText = (path: string): string | undefined => {
  try {
    return NodeFs.readFileSync(path, "latin1")
  } catch {
    return undefined
  }
}

const linkOf = (path: string): string | undefined => {
  try {
    return NodeFs.readlinkSync(path)
  } catch {
    return undefined
  }
}

/**
 * Whether the descriptor `fd` (a `/proc/<pid>/fd/<n>` path) is the PTY `pts`: its name, and the very
 * device (the same inode of the same devpts). A name alone is not enough: a container or a sandbox
 * has a devpts of its own, whose `/dev/pts/0` is another terminal than the host's.
 */
const isPts = (fd: string, pts: string): boolean => {
  if (linkOf(fd) !== pts) return false
  try {
    const held = NodeFs.statSync(fd)
    const device = NodeFs.statSync(pts)
    return held.dev === device.dev && held.ino === device.ino
  } catch {
    return false
  }
}

/** Kernel wait channels of a read from a tty, of select/poll, and of epoll. */
const readWaits = new Set(["n_tty_read", "wait_woken"])
const pollWait = /^(?:poll_schedule_timeout|do_select|do_sys_poll|core_sys_select)/
const epollWait = /^(?:do_epoll_wait|ep_poll)/

/** The number of `read` in `/proc/<pid>/syscall` on this architecture. */
const readSyscall = process.arch === "x64" ? "0" : process.arch === "arm64" ? "63" : undefined

/** The numbers of epoll_wait, epoll_pwait and epoll_pwait2 (as `/proc/<pid>/syscall` prints them). */
const epollSyscalls = new Set(process.arch === "x64" ? ["232", "281", "441"] : process.arch === "arm64" ? ["22", "441"] : [])

const EPOLLIN = 0x1

/**
 * Whether the epoll instance `epfd` of `pid` watches the PTY `pts` for input (`tfd:` lines of its
 * fdinfo): how an event loop (Node's libuv, which reopens the terminal as a descriptor of its own)
 * waits for the terminal — and a loop that waits only for timers does not.
 */
const epollWatches = (pid: number, epfd: number, pts: string): boolean => {
  const info = readText(`/proc/${pid}/fdinfo/${epfd}`) ?? ""
  for (const match of info.matchAll(/^tfd:\s*(\d+)\s+events:\s*([0-9a-f]+)/gm)) {
    if ((Number.parseInt(match[2]!, 16) & EPOLLIN) !== 0 && isPts(`/proc/${pid}/fd/${match[1]}`, pts)) return true
  }
  return false
}

/** Whether `pid` sleeps waiting for input from the PTY `pts`. */
const waitsForInput = (pid: number, pts: string): boolean => {
  const fields = procStatFields(String(pid))
  if (fields?.[0] !== "S") return false
  const wchan = readText(`/proc/${pid}/wchan`)?.trim() ?? ""
  if (readWaits.has(wchan)) {
    // A write to a full terminal sleeps in the same place: the call must be a read, and its first
    // argument the descriptor of the terminal.
    const [call, fd] = readText(`/proc/${pid}/syscall`)?.split(" ") ?? []
    return call === readSyscall && fd !== undefined && isPts(`/proc/${pid}/fd/${Number.parseInt(fd, 16)}`, pts)
  }
  if (epollWait.test(wchan)) {
    const [call, epfd] = readText(`/proc/${pid}/syscall`)?.split(" ") ?? []
    return call !== undefined && epollSyscalls.has(call) && epfd !== undefined &&
      epollWatches(pid, Number.parseInt(epfd, 16), pts)
  }
  return pollWait.test(wchan) && isPts(`/proc/${pid}/fd/0`, pts)
}

/** The PTY the leader's stdin is, e.g. `/dev/pts/3`. */
export const ptsOf = (leader: number): string | undefined => linkOf(`/proc/${leader}/fd/0`)

/** The foreground group of the leader's terminal, and whether it waits for input. */
export const foregroundOf = (
  leader: number,
  pts: string
): { readonly pgid: number; readonly readingInput: boolean; readonly wakeups: number } | undefined => {
  const fields = procStatFields(String(leader))
  if (fields === undefined || fields[0] === "Z" || fields[0] === "X") return undefined
  const pgid = Number(fields[5])
  if (!(pgid > 0)) return undefined
  return { pgid, readingInput: waitsForInput(pgid, pts), wakeups: wakeupsOf(pgid) }
}

/** How often `pid` has gone to sleep: it changes each time the process wakes and waits again. */
const wakeupsOf = (pid: number): number => {
  const status = readText(`/proc/${pid}/status`) ?? ""
  const voluntary = /^voluntary_ctxt_switches:\s*(\d+)/m.exec(status)?.[1]
  return voluntary === undefined ? -1 : Number(voluntary)
}

const isAlive = (pid: number, start: string): boolean => {
  const fields = procStatFields(String(pid))
  return fields !== undefined && fields[19] === start && fields[0] !== "Z" && fields[0] !== "X"
}

/**
 * The terminal's processes alive now, added to `known` (pid → start time): those already known and
 * still alive, plus a fresh scan of `/proc`. Known ones that are gone are removed. `leader` is the
 * PTY's session leader (the shell, or the runner that started it).
 */
export const refreshMembers = (leader: number, pts: string | undefined, known: Map<number, string>): void => {
  for (const [pid, start] of known) if (!isAlive(pid, start)) known.delete(pid)
  let entries: Array<string>
  try {
    entries = NodeFs.readdirSync("/proc")
  } catch {
    return
  }
  const parents = new Map<number, Array<number>>()
  const found: Array<number> = []
  const starts = new Map<number, string>()
  for (const entry of entries) {
    const pid = Number(entry)
    if (!Number.isInteger(pid) || pid <= 0 || pid === process.pid) continue
    const fields = procStatFields(entry)
    if (fields === undefined || fields[0] === "Z" || fields[0] === "X") continue
    const start = fields[19]!
    starts.set(pid, start)
    const ppid = Number(fields[1])
    const siblings = parents.get(ppid)
    if (siblings === undefined) parents.set(ppid, [pid])
    else siblings.push(pid)
    const holdsPty = pts !== undefined &&
      [0, 1, 2].some((fd) => isPts(`/proc/${pid}/fd/${fd}`, pts))
    if (Number(fields[3]) === leader || holdsPty) found.push(pid)
  }
  // The members and everything they started, found through the parent links.
  const stack = [...found, ...known.keys()]
  const visited = new Set<number>()
  while (stack.length > 0) {
    const pid = stack.pop()!
    const start = starts.get(pid)
    if (start === undefined || visited.has(pid)) continue
    visited.add(pid)
    known.set(pid, start)
    for (const child of parents.get(pid) ?? []) stack.push(child)
  }
}

/**
 * The children of `pid` now (from `/proc/<pid>/task/<pid>/children`, a scan of `/proc` where the
 * kernel lacks it).
 */
export const childrenOf = (pid: number): ReadonlyArray<number> => {
  const listed = readText(`/proc/${pid}/task/${pid}/children`)
  if (listed !== undefined) return listed.split(" ").filter((entry) => entry !== "").map(Number)
  let entries: Array<string>
  try {
    entries = NodeFs.readdirSync("/proc")
  } catch {
    return []
  }
  return entries.filter((entry) => /^\d+$/.test(entry) && procStatFields(entry)?.[1] === String(pid)).map(Number)
}

/**
 * Sends `signal` to each known process that is still the one known, but those in `spared` (a
 * runner, whose death would take the others along before they could handle the signal).
 */
export const signalMembers = (
  known: Map<number, string>,
  signal: NodeJS.Signals | 0,
  spared: ReadonlySet<number> = new Set()
): void => {
  for (const [pid, start] of known) {
    if (spared.has(pid) || !isAlive(pid, start)) continue
    try {
      process.kill(pid, signal)
    } catch {
      // Gone between the check and the signal.
    }
  }
}
