/**
 * Descriptors the host holds without close-on-exec: ones it inherited itself (a harness's supervisor
 * pipe, a terminal, a lock file). Every child would inherit them in turn, so a command could hold
 * the host's supervisor pipe open, or write to it. Node opens every descriptor of its own
 * close-on-exec, so the list read when a layer starts stays right for the host's lifetime.
 *
 * @internal
 */
import * as NodeFs from "node:fs"

// Linux's O_CLOEXEC as `/proc/self/fdinfo` prints it (octal `flags:`); Node's fs.constants lacks it.
const closeOnExec = 0o2000000

/**
 * The descriptors above stderr that a spawned child would inherit, ascending; empty where `/proc`
 * cannot tell (not Linux).
 */
export const inheritedDescriptorsSync = (): ReadonlyArray<number> => {
  let names: Array<string>
  try {
    names = NodeFs.readdirSync("/proc/self/fd")
  } catch {
    return []
  }
  const inherited: Array<number> = []
  for (const name of names) {
    const fd = Number(name)
    if (!Number.isInteger(fd) || fd <= 2) continue
    try {
      const flags = /^flags:\s*([0-7]+)$/m.exec(NodeFs.readFileSync(`/proc/self/fdinfo/${fd}`, "utf8"))
      if (flags !== null && (Number.parseInt(flags[1]!, 8) & closeOnExec) === 0) inherited.push(fd)
    } catch {
      // Closed meanwhile (the listing's own directory descriptor is): nothing to inherit.
    }
  }
  return inherited.sort((a, b) => a - b)
}

/**
 * A child's stdio entries from fd 3 on: `/dev/null` (the open descriptor `devNull`) over every
 * inherited descriptor, so no command gets the original; `"ignore"` leaves the others alone.
 */
export const maskInherited = (
  inherited: ReadonlyArray<number>,
  devNull: number
): Array<"ignore" | number> => {
  const highest = inherited.length === 0 ? 2 : inherited[inherited.length - 1]!
  const entries: Array<"ignore" | number> = Array.from({ length: highest - 2 }, () => "ignore")
  for (const fd of inherited) entries[fd - 3] = devNull
  return entries
}
