/**
 * Removal of directory trees that another process may change while they are walked: a walk by path
 * (Node's `rm`, which has no `openat`/`unlinkat`) can be led through a subdirectory swapped for a link
 * between its check and its use (`renameat2(RENAME_EXCHANGE)`), and so remove files elsewhere. GNU
 * `rm -rf` walks by descriptor instead: it opens each directory without following a link and checks it
 * is the one it listed, so a swapped name is only ever removed as the link it is.
 *
 * @internal
 */
import * as NodeChildProcess from "node:child_process"
import * as NodeFs from "node:fs"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"

/** `rm` did not remove everything (or could not start): what it said. */
export class RemoveTreesError extends Data.TaggedError("RemoveTreesError")<{ readonly message: string }> {}

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

/**
 * Removes `paths` (a link among them is removed, never followed) with `rm -rf --one-file-system`, so
 * neither a link nor a mount inside leads the walk elsewhere. An `rm` without that option (busybox)
 * removes nothing: what cannot be removed safely stays. Interrupting it kills `rm`; bound it with a
 * timeout. `rm` runs from `/` with no environment of the host's but `PATH`.
 */
export const removeTrees = (paths: ReadonlyArray<string>): Effect.Effect<void, RemoveTreesError> =>
  paths.length === 0 ? Effect.void : Effect.async<void, RemoveTreesError>((resume) => {
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
