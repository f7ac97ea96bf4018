/**
 * Spill directories name their owner, so a host that starts can sweep those of hosts that died
 * without cleaning up (SIGKILL with no reaper left, power loss) and never touch a live host's.
 *
 * The name is `effect-bash-<pid namespace>-<pid>-<start time>-XXXXXX`: the pid alone could be reused
 * by another process, its start time (clock ticks since boot, from `/proc/<pid>/stat`) cannot match
 * as well; a directory from another pid namespace (another container sharing the parent) is never
 * judged. Off Linux, and for directories kept on purpose (`keepSpillFiles`), the name carries no
 * owner and nothing sweeps it.
 *
 * @internal
 */
import * as NodeFs from "node:fs"
import { procStatFields } from "../spawner/procStat.js"

const ownedName = /^effect-bash-(\d+)-(\d+)-(\d+)-[A-Za-z0-9]{6}$/

// Start time is field 22 of `/proc/<pid>/stat`; a zombie's pid no longer names a running host.
const startTimeOf = (pid: string): string | undefined => {
  const fields = procStatFields(pid)
  return fields === undefined || fields[0] === "Z" || fields[0] === "X" ? undefined : fields[19]
}

const pidNamespace = (): string | undefined => {
  try {
    return /^pid:\[(\d+)\]$/.exec(NodeFs.readlinkSync("/proc/self/ns/pid"))?.[1]
  } catch {
    return undefined
  }
}

/**
 * The spill-directory prefix naming this host, or `effect-bash-` when the host cannot be named.
 */
export const ownedPrefix = (): string => {
  const namespace = pidNamespace()
  const startTime = startTimeOf("self")
  return namespace !== undefined && startTime !== undefined
    ? `effect-bash-${namespace}-${process.pid}-${startTime}-`
    : "effect-bash-"
}

/**
 * Whether `prefix`, as {@link ownedPrefix} returned it, names a host of our pid namespace that is no
 * longer running. A prefix without an owner (`effect-bash-`) is never judged dead.
 */
export const ownerPrefixIsDead = (prefix: string): boolean => /^effect-bash-\d+-\d+-\d+-$/.test(prefix) && ownerIsDead(`${prefix}000000`)

/**
 * Whether `name` is the spill directory of a host of our pid namespace that is no longer running
 * (gone, a zombie, or its pid now belongs to a process started at another time).
 */
export const ownerIsDead = (name: string): boolean => {
  const match = ownedName.exec(name)
  if (match === null || match[1] !== pidNamespace()) return false
  return startTimeOf(match[2]!) !== match[3]
}
