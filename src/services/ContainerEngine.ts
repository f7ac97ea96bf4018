/**
 * The container-engine port: everything the container executor asks of an engine. Make a box (image,
 * limits, network, labels, workspace), exec in it with stdin, stdout, stderr and an exit status,
 * signal a process group in it, copy files in and out as tar archives, list boxes and volumes by
 * label, remove them. The Docker Engine API is one implementation (`DockerContainerEngine`); docs/container.md maps
 * each operation to the Kubernetes API, for a pod adapter.
 *
 * An engine answers in its own errors, never in its protocol's status codes: a box that is not there
 * ({@link ContainerNotFoundError}, as an exec, an image or a path may not be), one that cannot do it now ({@link ContainerConflictError}: not
 * running, paused, being removed), an engine that cannot be reached or does not answer in time
 * ({@link EngineUnavailableError}), and any other refusal ({@link ContainerEngineError}).
 */
import type * as Effect from "effect/Effect"
import * as Context from "effect/Context"
import * as Data from "effect/Data"

/**
 * The engine refused: a bad parameter, a missing image, anything but the other errors of the port.
 *
 * @since 0.2.0
 * @category errors
 */
export class ContainerEngineError extends Data.TaggedError("ContainerEngineError")<{
  readonly message: string
  readonly cause?: unknown
}> {}

/**
 * What was named is not on the engine: a box, an exec, an image, a path in a box.
 *
 * @since 0.2.0
 * @category errors
 */
export class ContainerNotFoundError extends Data.TaggedError("ContainerNotFound")<{
  readonly message: string
  readonly cause?: unknown
}> {}

/**
 * The box cannot do it now: it is not running, paused, or being removed.
 *
 * @since 0.2.0
 * @category errors
 */
export class ContainerConflictError extends Data.TaggedError("ContainerConflict")<{
  readonly message: string
  readonly cause?: unknown
}> {}

/**
 * The engine could not be reached, or did not answer within its bound: nothing is known of what it did.
 *
 * @since 0.2.0
 * @category errors
 */
export class EngineUnavailableError extends Data.TaggedError("EngineUnavailable")<{
  readonly message: string
  readonly cause?: unknown
}> {}

/**
 * An archive of a box's path is larger than the bound its reader set: the read stopped there.
 *
 * @since 0.2.0
 * @category errors
 */
export class ArchiveTooLargeError extends Data.TaggedError("ArchiveTooLarge")<{
  readonly message: string
  /** The bound, in bytes. */
  readonly maxBytes: number
}> {}

/**
 * A container engine.
 *
 * @since 0.2.0
 * @category tags
 */
export class ContainerEngine extends Context.Tag("effect-bash/ContainerEngine")<ContainerEngine, ContainerEngine.Service>() {}

/**
 * The types of the {@link ContainerEngine} service.
 *
 * @since 0.2.0
 * @category models
 */
export declare namespace ContainerEngine {
  /**
   * Any error of the port.
   *
   * @since 0.2.0
   * @category errors
   */
  export type Error = ContainerEngineError | ContainerNotFoundError | ContainerConflictError | EngineUnavailableError

  /**
   * A signal sent to a process group.
   *
   * @since 0.2.0
   * @category models
   */
  export type Signal = "SIGTERM" | "SIGKILL"

  /**
   * What a box is made of.
   *
   * @since 0.2.0
   * @category models
   */
  export interface BoxOptions {
    readonly image: string
    /** Labels the engine keeps with the box: {@link Service.listBoxes} finds boxes by them. */
    readonly labels: Readonly<Record<string, string>>
    /**
     * Host directories mounted at the given paths inside (an engine on this machine only): the
     * workspace, read-write; others, such as an allow-listed network's proxies, `readOnly`.
     */
    readonly mounts: ReadonlyArray<{ readonly host: string; readonly target: string; readonly readOnly?: boolean | undefined }>
    /** Variables every process of the box starts with, besides the image's (an exec's own win). */
    readonly env?: Readonly<Record<string, string>> | undefined
    /**
     * The workspace: volumes of the engine's at these paths. Without a `name`, made with the box,
     * carrying its labels ({@link Service.listVolumes}), and removed with it; with one, the volume of
     * that name, made when missing and never removed by {@link Service.removeBox}.
     */
    readonly volumes?: ReadonlyArray<{ readonly target: string; readonly name?: string | undefined }> | undefined
    /** `none`: no interface but loopback. */
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

  /**
   * What to exec in a box.
   *
   * @since 0.2.0
   * @category models
   */
  export interface ExecOptions {
    readonly argv: ReadonlyArray<string>
    /** Added to the box's own environment. */
    readonly env: Readonly<Record<string, string>>
    /** The user to run as; the box's when absent. */
    readonly user?: string | undefined
    /** Whether the exec reads input ({@link ExecSession.sendInput}). */
    readonly stdin: boolean
    /**
     * Runs the exec on a TTY of the engine's, as the leader of a new session with the TTY as its
     * controlling terminal: its output is the TTY's, every byte a `stdout` frame, and what is written
     * is typed. The size is set with {@link ExecSession.resize}.
     */
    readonly tty?: boolean | undefined
  }

  /**
   * One chunk of an exec's output.
   *
   * @since 0.2.0
   * @category models
   */
  export interface Frame {
    readonly stream: "stdout" | "stderr"
    readonly bytes: Uint8Array
  }

  /**
   * A started exec: its input, its output read one frame at a time (the reader's pace is the
   * stream's), and its exit status.
   *
   * @since 0.2.0
   * @category models
   */
  export interface ExecSession {
    /**
     * Sends `bytes` as the rest of the exec's stdin (after what {@link write} sent) and closes it (only
     * when it was opened with `stdin: true`).
     * It does not wait for the exec to read them: a command that writes while it reads must have its
     * output read meanwhile.
     */
    readonly sendInput: (bytes: Uint8Array) => Effect.Effect<void>
    /**
     * Sends `bytes` to the exec's stdin and keeps it open (only when it was opened with `stdin: true`):
     * an exec that reads one request after another.
     */
    readonly write: (bytes: Uint8Array) => Effect.Effect<void>
    /**
     * The next frame; `undefined` once every writer of the exec's output has closed it, or once
     * {@link close} has released the connection. No bound: an exec's output lasts as long as its
     * command (the executor bounds a call's by its timeout).
     */
    readonly next: Effect.Effect<Frame | undefined>
    /**
     * The exit code of the exec's own process, as the engine recorded it; `undefined` while it runs.
     * Only the engine writes it: no process in the box can change it.
     */
    readonly exitCode: Effect.Effect<number | undefined, Error>
    /** Releases the connection (the exec's processes are not signalled). */
    readonly close: Effect.Effect<void>
    /** Sets the size of a TTY exec's terminal (its foreground group gets SIGWINCH); absent without a TTY. */
    readonly resize?: ((rows: number, cols: number) => Effect.Effect<void, Error>) | undefined
  }

  /**
   * What a listing sees of a box.
   *
   * @since 0.2.0
   * @category models
   */
  export interface BoxListing {
    readonly id: string
    readonly labels: Readonly<Record<string, string>>
    /** When the engine made the box, in ms since the epoch. */
    readonly createdMillis: number
  }

  /**
   * What a listing sees of a volume.
   *
   * @since 0.2.0
   * @category models
   */
  export interface VolumeListing {
    readonly name: string
    readonly labels: Readonly<Record<string, string>>
  }

  /**
   * The engine's operations.
   *
   * @since 0.2.0
   * @category models
   */
  export interface Service {
    /** Where the engine is, for messages: `unix:///var/run/docker.sock`, `tcp://host:2375`. */
    readonly address: string
    readonly ping: Effect.Effect<void, Error>
    /** How many CPUs the engine's machine has (the most a box may be given). */
    readonly cpuCount: Effect.Effect<number, Error>
    readonly hasImage: (image: string) => Effect.Effect<boolean, Error>
    /** Creates and starts a box; returns its id. */
    readonly createBox: (options: BoxOptions) => Effect.Effect<string, Error>
    /** Starts `argv` in the box. */
    readonly exec: (box: string, options: ExecOptions) => Effect.Effect<ExecSession, Error>
    /** Runs `argv` in the box (as `user`, else the box's) to its end, bounded; returns its stdout. */
    readonly run: (box: string, argv: ReadonlyArray<string>, user?: string) => Effect.Effect<string, Error>
    /**
     * Sends `signal` to every member of process group `pgid` in the box; a gone group or box is not an
     * error. False when no process could start in the box to send it (at its pids limit, or paused).
     */
    readonly signalGroup: (box: string, pgid: number, signal: Signal) => Effect.Effect<boolean, Error>
    /**
     * Whether a member of group `pgid` is running in the box (zombies count as dead; a gone box has
     * none; a paused box's frozen ones count). A probe that could not run answers true: the group is
     * not known to be gone.
     */
    readonly groupAlive: (box: string, pgid: number) => Effect.Effect<boolean, Error>
    /** Whether the box exists and runs. */
    readonly boxRunning: (box: string) => Effect.Effect<boolean, Error>
    /** Whether the box is paused (it refuses every exec, as a box that is gone does). */
    readonly boxPaused: (box: string) => Effect.Effect<boolean>
    readonly stopBox: (box: string) => Effect.Effect<void, Error>
    readonly startBox: (box: string) => Effect.Effect<void, Error>
    /** Removes the box and everything running in it; a gone box is not an error. */
    readonly removeBox: (box: string) => Effect.Effect<void, Error>
    /** The boxes carrying every one of `labels`. */
    readonly listBoxes: (labels: Readonly<Record<string, string>>) => Effect.Effect<ReadonlyArray<BoxListing>, Error>
    /** The volumes carrying every one of `labels` (those made with boxes carry theirs). */
    readonly listVolumes: (labels: Readonly<Record<string, string>>) => Effect.Effect<ReadonlyArray<VolumeListing>, Error>
    /** Removes a volume no box uses; a gone one is not an error. */
    readonly removeVolume: (name: string) => Effect.Effect<void, Error>
    /** Unpacks the tar archive `tar` into the directory `path` of the box. */
    readonly putArchive: (box: string, path: string, tar: Uint8Array) => Effect.Effect<void, Error>
    /**
     * `path` in the box (a file or a directory's tree), as a tar archive whose one top entry is named
     * after `path`'s last component; a link at `path` is the link, not what it names. An archive
     * longer than `maxBytes` fails with {@link ArchiveTooLargeError}, having read no more than that.
     */
    readonly getArchive: (box: string, path: string, maxBytes: number) => Effect.Effect<Uint8Array, Error | ArchiveTooLargeError>
  }
}
