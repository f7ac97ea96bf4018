/**
 * The one owner of "a host that ends takes its commands along", on the spawner's side:
 * - a host that exits running code (`process.exit()`, a plain return): its `exit` hook SIGKILLs every
 *   group still tracked (signals stay the host's: `NodeRuntime.runMain` interrupts and the layer's
 *   finalizers run);
 * - a host killed without running code: the {@link HostReaper}, a process that outlives the host,
 *   kills every group it was given; a stopped `HostReaper` is resumed by the host while any group is
 *   live.
 * Once a group is gone it is forgotten by the reaper (its id may be reused).
 *
 * @internal
 */
import type * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import type { HostReaper } from "./HostReaper.js"
import { signalGroupSync } from "./groupSignals.js"
import { everyMillis } from "../whenDone.js"

export interface HostDeath {
  /** Tracks a started group for the `exit` hook, from the tick it started. */
  readonly track: (pgid: number) => void
  /** Gives the group `pgid` to the `HostReaper`. */
  readonly giveReaper: (pgid: number) => Effect.Effect<void>
  /** The group `pgid` is gone: the reaper may not kill it any more. */
  readonly release: (pgid: number) => Effect.Effect<void>
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
      giveReaper: (pgid) => Effect.zipRight(watchWhileLive, reaper.track(pgid)),
      release: (pgid) =>
        Effect.suspend(() => {
          tracked.delete(pgid)
          return reaper.forget(pgid)
        }).pipe(Effect.zipRight(unwatchWhenIdle))
    }
    return hostDeath
  })
