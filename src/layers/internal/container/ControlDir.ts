/**
 * A box's control directory: a host directory mounted into the box, where each exec's wrapper writes
 * how its command's leader ended. The host watches it (inotify sees the box's writes, as the mount
 * is the same file system) and reads a status as soon as its line is complete.
 *
 * Any command in the box can write there too. Each exec's names are random (a command cannot plant
 * a status for a call to come) and a status counts only with the tags of its call's key, which the
 * command cannot read (`wrapper.ts`). An entry may be a link to a host file, a FIFO, a device, a
 * directory or a huge file, and may be swapped for another meanwhile. So the host opens only regular
 * files there, without following a link or blocking, reads at most a few bytes of one, removes an
 * exec's entries by unlinking them, and removes the directory's tree only once the box is gone, with
 * `rm -rf` (`../executor/removeTrees.ts`).
 *
 * @internal
 */
import * as NodeCrypto from "node:crypto"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import * as Effect from "effect/Effect"
import { removeTrees } from "../executor/removeTrees.js"
import type { StatusChannel, StatusWaiter } from "./statusChannel.js"
import { statusCell } from "./statusChannel.js"
import type { LeaderStatus, StatusKey } from "./wrapper.js"
import { makeStatusKey, parseStatus } from "./wrapper.js"

/**
 * An exec's files: its status, its leader's pid and the host's cancel file. A link is removed, not
 * followed; a directory the box made under one of these names stays until the box is gone.
 */
const removeFiles = (file: string) => {
  for (const suffix of ["", ".pid", ".cancel"]) {
    try {
      NodeFs.unlinkSync(`${file}${suffix}`)
    } catch {
      // Gone already, or a directory.
    }
  }
}

const { O_CREAT, O_EXCL, O_NOCTTY, O_NOFOLLOW, O_NONBLOCK, O_RDONLY, O_WRONLY } = NodeFs.constants

/** More than any status or pid the wrapper writes. */
const readLimit = 4096

/**
 * The start of a regular file; `undefined` for anything else. Only what `lstat` found to be a regular
 * file is opened (opening a device can act), and only if it is still that file once open.
 */
const readEntry = (path: string): string | undefined => {
  let found: NodeFs.Stats
  let fd: number
  try {
    found = NodeFs.lstatSync(path)
    if (!found.isFile()) return undefined
    fd = NodeFs.openSync(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY)
  } catch {
    return undefined
  }
  try {
    const opened = NodeFs.fstatSync(fd)
    if (!opened.isFile() || opened.ino !== found.ino || opened.dev !== found.dev) return undefined
    const buffer = Buffer.alloc(readLimit)
    let length = 0
    while (length < readLimit) {
      const read = NodeFs.readSync(fd, buffer, length, readLimit - length, length)
      if (read === 0) break
      length += read
    }
    return buffer.toString("utf8", 0, length)
  } catch {
    return undefined
  } finally {
    NodeFs.closeSync(fd)
  }
}

/** The status in `file`, once its line is complete and tagged under `key`. */
const readStatus = (file: string, key: StatusKey): LeaderStatus | undefined => {
  const text = readEntry(file)
  return text === undefined ? undefined : parseStatus(text, key)
}

/** A name no command can guess: 128 random bits. */
export const randomName = (): string => NodeCrypto.randomBytes(16).toString("hex")

/** Six random numbers of 62 bits (each taken modulo the tag's prime). */
export const randomKey = (): StatusKey => {
  const bytes = NodeCrypto.randomBytes(48)
  return makeStatusKey(Array.from({ length: 6 }, (_, i) => bytes.readBigUInt64BE(i * 8) >> 2n))
}

export class ControlDir implements StatusChannel {
  private readonly watcher: NodeFs.FSWatcher
  private readonly pending = new Map<string, () => void>()
  /** Execs given up on, whose wrappers may still write: their files go once their status is final. */
  private readonly abandoned = new Map<string, StatusKey>()

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
    const name = randomName()
    const key = randomKey()
    const file = NodePath.join(this.path, name)
    const cell = statusCell(() => readStatus(file, key))
    const read = () => {
      const status = cell.read()
      // The group is empty: no later write counts.
      if (status !== undefined && !status.groupAlive) this.pending.delete(name)
      return status
    }
    this.pending.set(name, () => {
      read()
    })
    return {
      name,
      key,
      read,
      // The host reads the file itself: what the wrapper wrote is there once it has exited.
      settled: Effect.void,
      cancel: Effect.sync(() => {
        this.abandoned.set(name, key)
        try {
          // Made, never opened: an entry already there (whatever it is) is a cancel to the wrapper.
          NodeFs.closeSync(NodeFs.openSync(`${file}.cancel`, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0o644))
        } catch (error) {
          // A directory already removed went with its box: nothing of it runs any more.
          if ((error as NodeJS.ErrnoException).code !== "EEXIST") return undefined
        }
        const pid = Number(readEntry(`${file}.pid`)?.trim() ?? "")
        return Number.isSafeInteger(pid) && pid > 0 ? pid : undefined
      }),
      onStatus: cell.onStatus,
      release: () => {
        this.pending.delete(name)
        cell.clear()
        // An abandoned exec's files stay until its wrapper is done: a leader that has not looked for
        // the cancel file yet must find it.
        if (!this.abandoned.has(name)) removeFiles(file)
      }
    }
  }

  private removeSettledAbandoned(): void {
    for (const [name, key] of this.abandoned) {
      const file = NodePath.join(this.path, name)
      const status = readStatus(file, key)
      if (status === undefined || status.groupAlive) continue
      removeFiles(file)
      this.abandoned.delete(name)
    }
  }

  /**
   * Stops watching; with `boxGone` (no process of the box runs any more), removes the directory,
   * whatever the box left in it. A box that may still run keeps it.
   */
  close(options: { readonly boxGone: boolean }): Effect.Effect<void> {
    return Effect.suspend(() => {
      this.watcher.close()
      this.pending.clear()
      if (!options.boxGone) return Effect.void
      // No wrapper runs any more: the files of abandoned execs go too. Then the directory is empty,
      // as after a box's usual life, and goes without a traversal; anything else the box left there
      // goes with `rm -rf`.
      for (const name of this.abandoned.keys()) removeFiles(NodePath.join(this.path, name))
      this.abandoned.clear()
      try {
        NodeFs.rmdirSync(this.path)
        return Effect.void
      } catch {
        return removeTrees([this.path], `the control directory ${this.path}`)
      }
    })
  }
}
