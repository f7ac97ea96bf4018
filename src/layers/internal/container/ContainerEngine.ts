/**
 * The container engine as the container executor needs it: create a session's box, exec in it,
 * signal a process group in it, ask whether a group is alive, remove it. The Docker Engine API is one
 * implementation (`DockerEngine`); a Kubernetes pod-exec adapter would be another.
 *
 * @internal
 */
import type * as Effect from "effect/Effect"
import * as Data from "effect/Data"

/**
 * The engine could not do what was asked (unreachable, an API error, a missing image).
 */
export class ContainerEngineError extends Data.TaggedError("ContainerEngineError")<{
  readonly message: string
  /** The engine's HTTP status when it answered, e.g. 404. */
  readonly status?: number | undefined
  readonly cause?: unknown
}> {}

/** What a box is made of. */
export interface BoxOptions {
  readonly image: string
  readonly labels: Readonly<Record<string, string>>
  /** Host directories mounted at the given paths inside. */
  readonly mounts: ReadonlyArray<{ readonly host: string; readonly target: string }>
  readonly network: "none" | "bridge"
  readonly memoryMb?: number | undefined
  readonly pidsLimit?: number | undefined
  readonly cpus?: number | undefined
  /** The user the box's processes run as (`uid:gid`, a name). */
  readonly user: string
  readonly readOnlyRootfs: boolean
  /** The seccomp profile, in the engine's JSON form. */
  readonly seccompProfile: string
  /** Drop every capability (else the engine's default set, but the one to make device nodes). */
  readonly dropCapabilities: boolean
  /**
   * A private file system at `path`, owned by `uid`, that only `uid` may write: where the box keeps
   * its supervisor's shell.
   */
  readonly supervisorDir: { readonly path: string; readonly uid: number }
}

/** One chunk of an exec's output. */
export interface Frame {
  readonly stream: "stdout" | "stderr"
  readonly bytes: Uint8Array
}

/** A started exec: its input and its output, read one frame at a time (the reader's pace is the stream's). */
export interface ExecSession {
  /**
   * Sends `bytes` as the exec's whole stdin and closes it (only when it was opened with `stdin: true`).
   * It does not wait for the exec to read them: a command that writes while it reads must have its
   * output read meanwhile.
   */
  readonly sendInput: (bytes: Uint8Array) => Effect.Effect<void>
  /** The next frame; `undefined` once every writer of the exec's output has closed it. */
  readonly next: Effect.Effect<Frame | undefined>
  /** Releases the connection (the exec's processes are not signalled). */
  readonly close: Effect.Effect<void>
}

/** What a box sweep sees of a box. */
export interface BoxListing {
  readonly id: string
  readonly labels: Readonly<Record<string, string>>
}

/**
 * The engine port.
 */
export interface ContainerEngine {
  /** Where the engine is, for messages: `unix:///var/run/docker.sock`, `tcp://host:2375`. */
  readonly address: string
  readonly ping: Effect.Effect<void, ContainerEngineError>
  /** How many CPUs the engine's machine has (the most a box may be given). */
  readonly cpuCount: Effect.Effect<number, ContainerEngineError>
  readonly hasImage: (image: string) => Effect.Effect<boolean, ContainerEngineError>
  /** Creates and starts a box; returns its id. */
  readonly createBox: (options: BoxOptions) => Effect.Effect<string, ContainerEngineError>
  /** Starts `argv` in the box, in `cwd` with `env` added to the box's own environment. */
  readonly exec: (box: string, options: {
    readonly argv: ReadonlyArray<string>
    readonly env: Readonly<Record<string, string>>
    readonly user?: string | undefined
    readonly stdin: boolean
  }) => Effect.Effect<ExecSession, ContainerEngineError>
  /** Runs `argv` in the box (as `user`, else the box's) to its end, bounded; returns its stdout. */
  readonly run: (box: string, argv: ReadonlyArray<string>, user?: string) => Effect.Effect<string, ContainerEngineError>
  /**
   * Sends `signal` to every member of process group `pgid` in the box; a gone group or box is not an
   * error. False when no process could start in the box to send it (at its pids limit, or paused).
   */
  readonly signalGroup: (box: string, pgid: number, signal: "SIGTERM" | "SIGKILL") => Effect.Effect<boolean, ContainerEngineError>
  /**
   * Whether a member of group `pgid` is running in the box (zombies count as dead; a gone box has
   * none; a paused box's frozen ones count). A probe that could not run answers true: the group is
   * not known to be gone.
   */
  readonly groupAlive: (box: string, pgid: number) => Effect.Effect<boolean, ContainerEngineError>
  /** Whether the box exists and runs. */
  readonly boxRunning: (box: string) => Effect.Effect<boolean, ContainerEngineError>
  /** Whether the box is paused (it refuses every exec, as a box that is gone does). */
  readonly boxPaused: (box: string) => Effect.Effect<boolean>
  readonly stopBox: (box: string) => Effect.Effect<void, ContainerEngineError>
  readonly startBox: (box: string) => Effect.Effect<void, ContainerEngineError>
  /** Removes the box and everything running in it; a gone box is not an error. */
  readonly removeBox: (box: string) => Effect.Effect<void, ContainerEngineError>
  /** The boxes carrying every one of `labels`. */
  readonly listBoxes: (labels: Readonly<Record<string, string>>) => Effect.Effect<ReadonlyArray<BoxListing>, ContainerEngineError>
}
