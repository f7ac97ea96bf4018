/**
 * The host's reaper: kills the process groups and removes the directories of a host that dies
 * without running its finalizers (SIGKILL, the OOM killer). `NodeProcessSpawner` provides it.
 */
import type * as Effect from "effect/Effect"
import * as Context from "effect/Context"

/**
 * The reaper of the current `ProcessSpawner` layer. Optional for consumers: a layer built over a
 * fake spawner has none.
 *
 * @since 0.1.0
 * @category tags
 */
export class HostReaper extends Context.Tag("effect-bash/HostReaper")<
  HostReaper,
  {
    /** A group started: kill it if the host dies. */
    readonly track: (pgid: number) => Effect.Effect<void>
    /**
     * A terminal started: its shell `leader` leads a session on the PTY `pts` (`/dev/pts/N`). If the
     * host dies, every process of the session, every process holding the PTY as stdio, and their
     * descendants are killed.
     */
    readonly trackTerminal: (leader: number, pts: string) => Effect.Effect<void>
    /** A group or a terminal (by its leader) is gone: forget it, so a reused id is never signalled. */
    readonly forget: (pgid: number) => Effect.Effect<void>
    /** Remove `directory` (recursively) if the host dies. */
    readonly removeOnDeath: (directory: string) => Effect.Effect<void>
    /**
     * Sends the reaper SIGCONT if it is stopped (a stopped reaper does nothing when the host dies);
     * the first time, a warning says so.
     */
    readonly resumeIfStopped: Effect.Effect<void>
  }
>() {}
