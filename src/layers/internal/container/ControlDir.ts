/**
 * A box's control directory: a host directory mounted into the box, where each exec's wrapper writes
 * how its command's leader ended. The host watches it (inotify sees the box's writes, as the mount
 * is the same file system) and reads a status as soon as its line is complete.
 *
 * @internal
 */
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import type { LeaderStatus } from "./wrapper.js"
import { parseStatus } from "./wrapper.js"

/** One exec's status file, as the host sees it. */
export interface StatusWaiter {
  /** The file's name inside the control directory. */
  readonly name: string
  /** The status once its line is complete; `undefined` before. */
  readonly read: () => LeaderStatus | undefined
  /**
   * Abandons an exec whose pid line was never read: a leader that has not run its command yet never
   * will (the wrapper exits on the cancel file), and the pid of one that may have is returned, to be
   * killed. The wrapper records its pid before it looks for the file; this writes the file before it
   * looks for the pid: one of the two sees the other's.
   */
  readonly cancel: () => number | undefined
  /** Calls `listener` (once) when the status is complete; returns a remover. */
  readonly onStatus: (listener: (status: LeaderStatus) => void) => () => void
  /** Removes the files and stops watching. */
  readonly release: () => void
}

/** An exec's files: its status, its job table, its leader's pid and the host's cancel file. */
const removeFiles = (file: string) => {
  for (const suffix of ["", ".j", ".pid", ".cancel"]) NodeFs.rmSync(`${file}${suffix}`, { force: true })
}

export class ControlDir {
  private readonly watcher: NodeFs.FSWatcher
  private readonly pending = new Map<string, () => void>()
  /** Execs given up on, whose wrappers may still write: their files go once their status is final. */
  private readonly abandoned = new Set<string>()
  private counter = 0

  /** Creates `path` (writable by any user of the box) and watches it. */
  constructor(readonly path: string) {
    NodeFs.mkdirSync(path, { recursive: true })
    NodeFs.chmodSync(path, 0o777)
    this.watcher = NodeFs.watch(path, (_event, name) => {
      if (name !== null) this.pending.get(name)?.()
    })
    // A watch that fails later only loses the early notice: the exec's end still reads the file.
    this.watcher.on("error", () => {})
  }

  expect(): StatusWaiter {
    this.removeSettledAbandoned()
    const name = String(++this.counter)
    const file = NodePath.join(this.path, name)
    let status: LeaderStatus | undefined
    const listeners = new Set<(status: LeaderStatus) => void>()
    // Read again while the group has members: the wrapper adds `empty` once it has none.
    const read = () => {
      if (status !== undefined && !status.groupAlive) return status
      let read: LeaderStatus | undefined
      try {
        read = parseStatus(NodeFs.readFileSync(file, "utf8"))
      } catch {
        return status
      }
      if (read === undefined) return status
      const first = status === undefined
      status = read
      if (first) {
        for (const listener of listeners) listener(read)
        listeners.clear()
      }
      if (!read.groupAlive) this.pending.delete(name)
      return status
    }
    this.pending.set(name, () => {
      read()
    })
    return {
      name,
      read,
      cancel: () => {
        this.abandoned.add(name)
        try {
          // A directory already removed went with its box: nothing of it runs any more.
          NodeFs.writeFileSync(`${file}.cancel`, "")
          const pid = Number(NodeFs.readFileSync(`${file}.pid`, "latin1").trim())
          return Number.isSafeInteger(pid) && pid > 0 ? pid : undefined
        } catch {
          return undefined
        }
      },
      onStatus: (listener) => {
        const known = read()
        if (known !== undefined) {
          listener(known)
          return () => {}
        }
        listeners.add(listener)
        return () => listeners.delete(listener)
      },
      release: () => {
        this.pending.delete(name)
        listeners.clear()
        // An abandoned exec's files stay until its wrapper is done: a leader that has not looked for
        // the cancel file yet must find it.
        if (!this.abandoned.has(name)) removeFiles(file)
      }
    }
  }

  private removeSettledAbandoned(): void {
    for (const name of this.abandoned) {
      const file = NodePath.join(this.path, name)
      let status: LeaderStatus | undefined
      try {
        status = parseStatus(NodeFs.readFileSync(file, "utf8"))
      } catch {
        continue
      }
      if (status === undefined || status.groupAlive) continue
      removeFiles(file)
      this.abandoned.delete(name)
    }
  }

  close(): void {
    this.watcher.close()
    this.pending.clear()
    NodeFs.rmSync(this.path, { recursive: true, force: true })
  }
}
