/**
 * The one owner of "a host that ends takes its commands along", on the spawner's side:
 * - a host that exits running code (`process.exit()`, a plain return): its `exit` hook SIGKILLs every
 *   group still tracked (signals stay the host's: `NodeRuntime.runMain` interrupts and the layer's
 *   finalizers run);
 * - a host killed without running code: each group has one reaper, a process that outlives the
 *   host: the launcher for the groups it started (it kills them when its host end closes, see
 *   `launcherMain.ts`), the {@link HostReaper} for the others. A launcher that exits hands its
 *   groups over to the `HostReaper`; a stopped launcher is resumed by the `HostReaper` first, and a
 *   stopped `HostReaper` by the host while any group is live. Two processes, one rule: a group has
 *   exactly one reaper at a time, and this module decides which.
 * Once a group is gone it is forgotten by its reaper (its id may be reused).
 *
 * @internal
 */
import type * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Runtime from "effect/Runtime"
import type { HostReaper } from "./HostReaper.js"
import { signalGroupSync } from "./groupSignals.js"
import type { Launcher } from "./Launcher.js"
import type { SpawnedChild } from "./spawnedChild.js"
import { everyMillis } from "../whenDone.js"

export interface HostDeath {
  /** Tracks a started group for the `exit` hook, from the tick it started. */
  readonly track: (pgid: number) => void
  /** Gives the group of `spawned` its reaper: the launcher while it reaps, else the `HostReaper`. */
  readonly giveReaper: (spawned: SpawnedChild, launcher: Launcher | undefined) => Effect.Effect<void>
  /** The group of `spawned` is gone: no reaper may kill it any more. */
  readonly release: (spawned: SpawnedChild, launcher: Launcher | undefined) => Effect.Effect<void>
  /** The launcher `launcherPid` has exited: the groups it was the reaper of go to the `HostReaper`. */
  readonly launcherExited: (launcherPid: number) => void
  /** The launcher `launcherPid` started: if the host dies, the reaper resumes it first. */
  readonly launcherStarted: (launcherPid: number) => Effect.Effect<void>
}

// How often the host looks at the reaper while a group is live: a host killed within this long of
// a command stopping its reaper leaves that command's groups alive.
const reaperCheckMs = 500

export const makeHostDeath = (reaper: Context.Tag.Service<typeof HostReaper>) =>
  Effect.gen(function*() {
    const tracked = new Set<number>()
    const killTracked = () => {
      for (const pgid of tracked) {
        try {
          signalGroupSync(pgid, "SIGKILL")
        } catch {
          // Best effort while the host is exiting.
        }
      }
    }
    yield* Effect.acquireRelease(
      Effect.sync(() => process.on("exit", killTracked)),
      () => Effect.sync(() => process.off("exit", killTracked))
    )
    // The groups the launcher kills if the host dies; the reaper takes them over if it dies first.
    const reapedByLauncher = new Set<number>()
    const runtime = yield* Effect.runtime<never>()
    // While any group is live, the host resumes a stopped reaper (a command may stop it; a stopped
    // reaper would leave every group alive when the host dies, and its pipe cannot tell the host). The
    // watch stops as the last live group is released, so an idle host keeps no timer (its
    // event loop may end at once).
    let live = 0
    let stopWatch: (() => Effect.Effect<void>) | undefined
    yield* Effect.addFinalizer(() => stopWatch?.() ?? Effect.void)
    const watchWhileLive = Effect.sync(() => {
      live++
      stopWatch ??= everyMillis(runtime, reaperCheckMs, reaper.resumeIfStopped)
    })
    const unwatchWhenIdle = Effect.suspend(() => {
      live--
      if (live > 0 || stopWatch === undefined) return Effect.void
      const stop = stopWatch
      stopWatch = undefined
      return stop()
    })
    const hostDeath: HostDeath = {
      track: (pgid) => {
        tracked.add(pgid)
      },
      giveReaper: (spawned, launcher) =>
        Effect.zipRight(
          watchWhileLive,
          Effect.suspend(() => {
            const pid = spawned.child.pid!
            if (spawned._tag === "Direct" || launcher?.reaps() !== true) return reaper.track(pid)
            reapedByLauncher.add(pid)
            return Effect.void
          })
        ),
      release: (spawned, launcher) =>
        Effect.suspend(() => {
          const pid = spawned.child.pid!
          tracked.delete(pid)
          if (!reapedByLauncher.delete(pid)) return reaper.forget(pid)
          launcher?.forget(pid)
          return Effect.void
        }).pipe(Effect.zipRight(unwatchWhenIdle)),
      launcherExited: (launcherPid) => {
        const orphaned = [...reapedByLauncher]
        reapedByLauncher.clear()
        Runtime.runSync(runtime)(
          Effect.forEach(orphaned, reaper.track, { discard: true }).pipe(Effect.zipRight(reaper.forget(launcherPid)))
        )
      },
      launcherStarted: (launcherPid) => reaper.resumeOnDeath(launcherPid)
    }
    return hostDeath
  })
