/**
 * The sweep of the spill directories of hosts that died without removing theirs.
 *
 * Their names are easy to forge (the pid namespace is visible, any unused pid will do), and the
 * parent is usually a shared `/tmp`: another user, or a container whose workspace holds the parent,
 * can plant a tree there and swap its subdirectories for links while it is being removed. So only a
 * real directory (not a link) owned by this process's user is removed, and only by {@link removeTrees},
 * whose walk never follows a link; anything else is left where it is.
 *
 * @internal
 */
import type * as FileSystem from "@effect/platform/FileSystem"
import * as Effect from "effect/Effect"
import * as NodePath from "node:path"
import { ownDirectories, removeTrees } from "./removeTrees.js"
import { ownerIsDead } from "./spillOwner.js"

/**
 * Removes the spill directories of dead hosts in `parent`. Failures only cost disk space, so they are
 * logged, never raised.
 */
export const sweepDeadHosts = (fs: FileSystem.FileSystem, parent: string): Effect.Effect<void> =>
  fs.readDirectory(parent).pipe(
    Effect.flatMap((names) =>
      Effect.sync(() => ownDirectories(names.filter(ownerIsDead).map((name) => NodePath.join(parent, name))))
    ),
    Effect.flatMap((dead) => removeTrees(dead, "the spill directories of dead hosts")),
    Effect.catchAllCause((cause) => Effect.logDebug("could not remove the spill directories of dead hosts", cause))
  )
