/**
 * Removes directory trees the boxes could write, with GNU `rm -rf`: its traversal opens each
 * directory by descriptor without following a link, so a tree that a box still running swaps a
 * directory of for a link cannot lead it elsewhere, and no depth (past `PATH_MAX`) stops it.
 *
 * @internal
 */
import * as NodeChildProcess from "node:child_process"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"

// Housekeeping, never a reason to hang.
const removalBoundMs = 10_000

/**
 * Removes `paths` and everything below them; what cannot be removed (or a removal past its bound) is
 * logged as `what`, never raised.
 */
export const removeTrees = (paths: ReadonlyArray<string>, what: string): Effect.Effect<void> =>
  paths.length === 0 ? Effect.void : Effect.async<void, Error>((resume) => {
    const rm = NodeChildProcess.execFile("rm", ["-rf", "--", ...paths], (error, _stdout, stderr) =>
      resume(error === null ? Effect.void : Effect.fail(new Error(stderr.trim() || error.message))))
    return Effect.sync(() => rm.kill("SIGKILL"))
  }).pipe(
    // The daemon below is interrupted by nothing else: its bound interrupts the removal.
    Effect.interruptible,
    Effect.timeoutFail({ duration: removalBoundMs, onTimeout: () => new Error(`rm -rf did not end within ${removalBoundMs} ms`) }),
    Effect.catchAllCause((cause) => Effect.logWarning(`could not remove ${what}`, cause)),
    // A fiber of its own: a removal in the finalizer of an interrupted fiber runs to its end (or its
    // bound), and one that is given up on ends on its own.
    Effect.forkDaemon,
    Effect.flatMap(Fiber.join)
  )
