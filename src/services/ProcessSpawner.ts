/**
 * The operating-system port: start a `bash -c` in its own process group and observe or signal it.
 *
 * The executor owns every policy (timeouts, grace, drain bounds, spill files); a spawner only does
 * what the OS does, so a test can replace it with a fake and drive time with `TestClock`.
 */
import type * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import * as Context from "effect/Context"
import * as Data from "effect/Data"

/**
 * The process could not be started (missing workdir, missing `bash`, fd exhaustion, …).
 *
 * @since 0.1.0
 * @category errors
 */
export class SpawnError extends Data.TaggedError("SpawnError")<{
  /** The errno code when the OS gave one, e.g. `ENOENT`. */
  readonly code: string | undefined
  readonly message: string
  readonly cause?: unknown
}> {}

/**
 * The OS port behind the local executor.
 *
 * @since 0.1.0
 * @category tags
 */
export class ProcessSpawner extends Context.Tag("effect-bash/ProcessSpawner")<
  ProcessSpawner,
  {
    /** Starts `bash -c options.command` as the leader of a new process group (and session). */
    readonly spawn: (options: ProcessSpawner.Options) => Effect.Effect<ProcessSpawner.Process, SpawnError, Scope.Scope>
  }
>() {}

/**
 * The types of the {@link ProcessSpawner} service.
 *
 * @since 0.1.0
 * @category models
 */
export declare namespace ProcessSpawner {
  /**
   * Signals the executor sends to a process group.
   *
   * @since 0.1.0
   * @category models
   */
  export type GroupSignal = "SIGTERM" | "SIGKILL"

  /**
   * A runner the shell is started through (e.g. bubblewrap): `argv` comes first and the usual bash
   * invocation follows it, so `argv` ends with the runner's own `--`. The runner receives the same
   * `env`, `cwd` and fds as the shell would.
   *
   * @since 0.1.0
   * @category models
   */
  export interface Wrapper {
    readonly argv: ReadonlyArray<string>
    /**
     * The runner (the group leader) starts a PID namespace whose init is its direct child. SIGTERM then
     * goes to the group's other members only: a TERM to the runner would tear the namespace down
     * before the command could handle it. SIGKILL still goes to the whole group, and the namespace
     * dies with its runner.
     */
    readonly pidNamespace: boolean
    /**
     * Bytes the runner reads from its descriptor `fd` (e.g. bubblewrap's `--seccomp FD`): a pipe the
     * spawner writes them to and then closes; its end is the process's, released with it. `fd` is 4 or
     * more (fd 3 may carry a long command to bash); the runner must close it before the command runs.
     */
    readonly input?: { readonly fd: number; readonly bytes: Uint8Array }
  }

  /**
   * What to start: `bash -c <command>` in `cwd` with exactly `env`, through `wrapper` when given. The
   * command is never read as bash's options (`--version` is a command), and may be longer than the OS
   * allows an argument. A spawner may reuse what it derived from an `env` object for a later spawn
   * with the same object: pass a new object for a different environment, never a changed one.
   *
   * @since 0.1.0
   * @category models
   */
  export interface Options {
    readonly command: string
    readonly cwd: string
    readonly env: Readonly<Record<string, string>>
    /** Written to fd 0 and then closed; when absent fd 0 is `/dev/null`. */
    readonly stdin?: string | Uint8Array
    readonly wrapper?: Wrapper
    /**
     * The call's abort trigger. A spawner whose start is slow (a container to create first) starts
     * nothing once it has fired, and fails; one that starts at once may ignore it.
     */
    readonly signal?: AbortSignal
  }

  /**
   * How the group leader (the shell) ended.
   *
   * @since 0.1.0
   * @category models
   */
  export interface Exit {
    readonly exitCode: number | null
    readonly signal: string | null
  }

  /**
   * Takes one chunk of a pipe at once. The effect it may return (e.g. a write to a file) completes
   * before the pipe's next chunk is delivered: that is the backpressure.
   *
   * @since 0.1.0
   * @category models
   */
  export type OutputSink = (chunk: Uint8Array) => Effect.Effect<void> | undefined

  /**
   * Where each of the leader's pipes delivers its chunks.
   *
   * @since 0.1.0
   * @category models
   */
  export interface OutputSinks {
    readonly stdout: OutputSink
    readonly stderr: OutputSink
  }

  /**
   * The leader's pipes being read into their sinks, as {@link Process.openPipes} returns them: a
   * chunk reaches its sink from the pipe's own callback, and only a sink's work needs {@link drain}.
   *
   * @since 0.1.0
   * @category models
   */
  export interface OpenPipes {
    /** Both pipes have ended and every chunk was delivered with no work left to run. */
    readonly ended: boolean
    /** A sink returned work (chunks queue behind it) or a read failed: {@link drain} must run next. */
    readonly hasWork: boolean
    /** Calls `listener` once, on the next change of {@link ended} or {@link hasWork}; returns a remover. */
    readonly onChange: (listener: () => void) => () => void
    /** Runs the sinks' work and delivers the rest, until both pipes have ended. */
    readonly drain: Effect.Effect<void>
    /** Stops delivering (the pipes themselves belong to the process's scope). */
    readonly close: () => void
  }

  /**
   * A started process group. Its lifetime is the `Scope` it was spawned in: closing that scope stops
   * tracking the group and releases its pipes (it does **not** kill it — the executor decides that).
   *
   * @since 0.1.0
   * @category models
   */
  export interface Process {
    /** The leader's pid, which is also the process-group id. */
    readonly pid: number
    /**
     * Starts reading the leader's stdout and stderr into their sinks, until both have ended (every
     * writer of each pipe has closed it). A pipe's chunks arrive in order, each after the effect its
     * sink returned for the previous one has completed (run by {@link OpenPipes.drain}). A pipe whose
     * read fails ends there, after the bytes read before the failure. Call it once.
     */
    readonly openPipes: (sinks: OutputSinks) => OpenPipes
    /** Completes when the leader has exited (its pipes may still be open). */
    readonly exit: Effect.Effect<Exit>
    /**
     * The same moment as {@link exit}, as a callback (at once if the leader has already exited);
     * returns a function that removes `listener`.
     */
    readonly onExit: (listener: (exit: Exit) => void) => () => void
    /** Sends a signal to every member of the group; a group that is already gone is not an error. */
    readonly signalGroup: (signal: GroupSignal) => Effect.Effect<void>
    /** Whether any member of the group is still alive. Zombies count as dead. */
    readonly groupAlive: Effect.Effect<boolean>
  }
}
