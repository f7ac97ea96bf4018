/**
 * The pseudo-terminal port: start a program on a new PTY as the leader of its own session, then
 * write to it, inspect its foreground process group and signal the processes of its session.
 *
 * The `Terminals` layer owns every policy (readiness, timeouts, grace, bounds); a spawner only does
 * what the OS does, so a test can replace it with a fake and drive time with `TestClock`.
 */
import type * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import * as Context from "effect/Context"
import * as Data from "effect/Data"
import type { ProcessSpawner } from "./ProcessSpawner.js"

/**
 * The PTY could not be started: no PTY implementation is installed (the optional peer `node-pty`),
 * the program or the directory is missing, or the OS refused.
 *
 * @since 0.2.0
 * @category errors
 */
export class PtySpawnError extends Data.TaggedError("PtySpawnError")<{
  readonly message: string
  readonly cause?: unknown
}> {}

/**
 * The OS port behind the terminals.
 *
 * @since 0.2.0
 * @category tags
 */
export class PtySpawner extends Context.Tag("effect-bash/PtySpawner")<
  PtySpawner,
  {
    /**
     * Starts `options.file` on a new PTY, leading a new session and process group. Closing the scope
     * SIGKILLs whatever of the session is left and releases the PTY.
     */
    readonly spawn: (options: PtySpawner.Options) => Effect.Effect<PtySpawner.Pty, PtySpawnError, Scope.Scope>
  }
>() {}

/**
 * The types of the {@link PtySpawner} service.
 *
 * @since 0.2.0
 * @category models
 */
export declare namespace PtySpawner {
  /**
   * Signals a terminal's processes can be sent.
   *
   * @since 0.2.0
   * @category models
   */
  export type Signal = "SIGINT" | "SIGTERM" | "SIGKILL" | "SIGTSTP" | "SIGHUP" | "SIGCONT"

  /**
   * What to start, where, with exactly which environment, on a PTY of which size.
   *
   * @since 0.2.0
   * @category models
   */
  export interface Options {
    readonly file: string
    readonly args: ReadonlyArray<string>
    readonly cwd: string
    readonly env: Readonly<Record<string, string>>
    readonly rows: number
    readonly cols: number
    /**
     * Receives the PTY's output as decoded UTF-8, chunk by chunk, from the first byte on. Returns
     * `false` when the receiver holds all it will: the spawner then stops reading the PTY (its
     * buffer fills and the writer blocks, as on a full pipe) until {@link Pty.resume}; a chunk
     * already on its way may still arrive.
     */
    readonly onData: (chunk: string) => boolean
    /** Called once when the leader has exited and its output has been delivered. */
    readonly onExit: (exit: Exit) => void
    /**
     * A runner to start `file` under (e.g. bubblewrap): the PTY's session leader is then the runner,
     * and `file` its command, with its own PID namespace when the runner says so.
     */
    readonly wrapper?: ProcessSpawner.Wrapper
  }

  /**
   * How the leader (the shell) ended.
   *
   * @since 0.2.0
   * @category models
   */
  export interface Exit {
    readonly exitCode: number | null
    readonly signal: string | null
  }

  /**
   * The PTY's foreground process group, and whether it is waiting for input from the terminal.
   *
   * @since 0.2.0
   * @category models
   */
  export interface Foreground {
    readonly pgid: number
    /** A process of the group sleeps in a read (or a select/poll, or an epoll wait) on the terminal. */
    readonly readingInput: boolean
    /**
     * A counter of the group leader's sleeps (voluntary context switches): when it differs between
     * two looks, the leader woke up in between — a wait seen twice is then not the same wait.
     */
    readonly wakeups: number
  }

  /**
   * A started PTY.
   *
   * @since 0.2.0
   * @category models
   */
  export interface Pty {
    /**
     * The shell's pid, which is also its process group: the PTY's session leader, or under a runner
     * the runner's command (its pid as the host sees it).
     */
    readonly pid: number
    readonly write: (data: string) => Effect.Effect<void>
    /** Reads the PTY again after `onData` returned `false`; nothing while it reads. */
    readonly resume: Effect.Effect<void>
    /** The foreground group now; `undefined` once the leader is gone or off Linux. */
    readonly foreground: Effect.Effect<Foreground | undefined>
    /**
     * Gives the PTY's reader its turn: when it completes and the PTY had output ready at the call,
     * `onData` has had some of it (unless the reads are stopped). Readiness runs it after each look
     * at the foreground, so a wait is not judged while output written before it waits unread. Left
     * out by a spawner that hands `onData` its output as it is written (a fake).
     */
    readonly catchUp?: Effect.Effect<void>
    /** Sends `signal` to the group `pgid` (a foreground group read before); false when it is gone. */
    readonly signalGroup: (pgid: number, signal: Signal) => Effect.Effect<boolean>
    /**
     * Sends `signal` to every process of the terminal: its session, the processes holding its PTY
     * (children that left the session with `setsid`) and their descendants. Returns how many are alive.
     */
    readonly signalAll: (signal: Signal) => Effect.Effect<number>
    /** How many processes of the terminal (as {@link signalAll} finds them) are alive. */
    readonly alive: Effect.Effect<number>
    /** How many of them are alive besides the shell (and a runner that started it). */
    readonly othersAlive: Effect.Effect<number>
  }
}
