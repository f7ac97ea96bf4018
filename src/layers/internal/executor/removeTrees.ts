/**
 * Removal of directory trees that another process may change while they are walked: a walk by path
 * (Node's `rm`, which has no `openat`/`unlinkat`) can be led through a subdirectory swapped for a link
 * between its check and its use (`renameat2(RENAME_EXCHANGE)`), and so remove files elsewhere, and a
 * tree deeper than `PATH_MAX` stops it. GNU `rm -rf` walks by descriptor instead: it opens each
 * directory without following a link and checks it is the one it listed, so a swapped name is only
 * ever removed as the link it is, at any depth.
 *
 * @internal
 */
import * as NodeChildProcess from "node:child_process"
import * as NodeFs from "node:fs"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"

/** `rm` did not remove everything, could not start, or did not end within its bound: what it said. */
export class RemoveTreesError extends Data.TaggedError("RemoveTreesError")<{ readonly message: string }> {}

// Housekeeping, never a reason to hang.
const removalBoundMs = 10_000

/**
 * The `paths` that are directories themselves (not links to one) owned by this process's user: the
 * only trees a sweep of names anyone could have made may remove.
 */
export const ownDirectories = (paths: ReadonlyArray<string>): Array<string> =>
  paths.filter((path) => {
    try {
      const found = NodeFs.lstatSync(path)
      return found.isDirectory() && found.uid === process.getuid?.()
    } catch {
      return false
    }
  })

const rmRf = (paths: ReadonlyArray<string>): Effect.Effect<void, RemoveTreesError> =>
  Effect.async<void, RemoveTreesError>((resume) => {
    const rm = NodeChildProcess.execFile(
      "rm",
      ["-rf", "--one-file-system", "--", ...paths],
      { cwd: "/", env: { PATH: process.env.PATH ?? "/usr/bin:/bin", LC_ALL: "C" } },
      (error, _stdout, stderr) =>
        resume(
          error === null
            ? Effect.void
            : Effect.fail(new RemoveTreesError({ message: String(stderr).split("\n")[0] || error.message }))
        )
    )
    return Effect.sync(() => rm.kill("SIGKILL"))
  })

/**
 * Removes `paths` (a link among them is removed, never followed) with `rm -rf --one-file-system`, so
 * neither a link nor a mount inside leads the walk elsewhere; an `rm` without that option (busybox)
 * removes nothing: what cannot be removed safely stays. `rm` runs from `/` with no environment of the
 * host's but `PATH`, bounded in time; what it could not remove is logged as `what`, never raised.
 * It runs in a fiber of its own, so a removal in the finalizer of an interrupted fiber runs to its end
 * (or its bound).
 */
export const removeTrees = (paths: ReadonlyArray<string>, what: string): Effect.Effect<void> =>
  paths.length === 0 ? Effect.void : rmRf(paths).pipe(
    // Nothing else interrupts the daemon below: its bound interrupts the removal.
    Effect.interruptible,
    Effect.timeoutFail({
      duration: removalBoundMs,
      onTimeout: () => new RemoveTreesError({ message: `rm -rf did not end within ${removalBoundMs} ms` })
    }),
    Effect.catchAllCause((cause) => Effect.logWarning(`could not remove ${what}`, cause)),
    Effect.forkDaemon,
    Effect.flatMap(Fiber.join)
  )
