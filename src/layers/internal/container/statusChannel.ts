/**
 * How the host learns how each exec's leader ended: the wrapper writes a tagged status file into the
 * box's control directory (`wrapper.ts`), which the host reads either as a directory of its own that
 * the box mounts (`ControlDir`, an engine on this machine) or through a watcher in the box that says
 * each file over its exec's output (`BoxControl`, any engine).
 *
 * @internal
 */
import type * as Effect from "effect/Effect"
import type { LeaderStatus, StatusKey } from "./wrapper.js"

/**
 * One exec's status as last read with `parse`, read again while its group has members (the wrapper
 * adds `empty` once it has none), and the listeners of its first; `onFirst` runs when it is first read.
 */
export const statusCell = (parse: () => LeaderStatus | undefined, onFirst: () => void = () => {}) => {
  let status: LeaderStatus | undefined
  const listeners = new Set<(status: LeaderStatus) => void>()
  const read = (): LeaderStatus | undefined => {
    if (status !== undefined && !status.groupAlive) return status
    const parsed = parse()
    if (parsed === undefined) return status
    const first = status === undefined
    status = parsed
    if (first) {
      onFirst()
      for (const listener of listeners) listener(parsed)
      listeners.clear()
    }
    return status
  }
  const onStatus = (listener: (status: LeaderStatus) => void): () => void => {
    const known = read()
    if (known !== undefined) {
      listener(known)
      return () => {}
    }
    listeners.add(listener)
    return () => listeners.delete(listener)
  }
  return { read, onStatus, clear: () => listeners.clear() }
}

/** One exec's status file, as the host sees it. */
export interface StatusWaiter {
  /** The file's name inside the control directory. */
  readonly name: string
  /** The exec's key: its line goes first on the exec's stdin. */
  readonly key: StatusKey
  /** The status once its line is complete, as last seen; `undefined` before. */
  readonly read: () => LeaderStatus | undefined
  /**
   * Waits (bounded) until what the wrapper wrote before it exited can be read: called once the exec's
   * output has ended.
   */
  readonly settled: Effect.Effect<void>
  /**
   * Abandons an exec whose pid line was never read: a leader that has not run its command yet never
   * will (the wrapper exits on the cancel file), and the pid of one that may have is returned, to be
   * killed. The wrapper records its pid before it looks for the file; this writes the file before it
   * looks for the pid: one of the two sees the other's.
   */
  readonly cancel: Effect.Effect<number | undefined>
  /** Calls `listener` (once) when the status is complete; returns a remover. */
  readonly onStatus: (listener: (status: LeaderStatus) => void) => () => void
  /** Forgets the exec (its files go). */
  readonly release: () => void
}

/** A box's control directory, as the host reads it. */
export interface StatusChannel {
  expect(): StatusWaiter
  /**
   * Stops reading; with `boxGone` (no process of the box runs any more), removes what the host kept
   * of the directory.
   */
  close(options: { readonly boxGone: boolean }): Effect.Effect<void>
}
