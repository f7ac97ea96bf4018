/**
 * Persistent interactive shells on PTYs: open one for a session, type into it and wait until it is
 * ready for more, read its bounded scrollback, signal its foreground job, close it, list them.
 * `owner` arguments are the calling session id (undefined outside a session): a terminal answers
 * only its owner.
 */
import type * as Effect from "effect/Effect"
import * as Context from "effect/Context"
import * as Data from "effect/Data"
import type { PtySpawner } from "./PtySpawner.js"

/**
 * Why a terminal operation was refused or failed; `message` is the text the model reads.
 *
 * @since 0.2.0
 * @category errors
 */
export class TerminalError extends Data.TaggedError("TerminalError")<{
  readonly reason:
    | "unknown"
    | "foreign"
    | "busy"
    | "closing"
    | "exited"
    | "limit"
    | "invalid"
    | "no-backend"
    | "name-taken"
    | "unavailable"
    | "startup"
  readonly message: string
}> {}

/**
 * The terminal service.
 *
 * @since 0.2.0
 * @category tags
 */
export class Terminals extends Context.Tag("effect-bash/Terminals")<
  Terminals,
  {
    /** Starts a shell and waits for its first prompt; its startup output comes back with it. */
    readonly open: (
      owner: string | undefined,
      options: Terminals.OpenOptions
    ) => Effect.Effect<Terminals.Opened, TerminalError>
    /**
     * Writes `input` and waits for readiness. Interrupting it sends SIGINT to the foreground group
     * (never a written `\x03`) and frees the terminal for the next send.
     */
    readonly send: (
      owner: string | undefined,
      id: string,
      input: Terminals.Input
    ) => Effect.Effect<Terminals.SendResult, TerminalError>
    /** Writes `input` and returns at once; the operation runs in the terminal until it settles. */
    readonly startSend: (
      owner: string | undefined,
      id: string,
      input: Terminals.Input
    ) => Effect.Effect<Terminals.SendOperation, TerminalError>
    /** A page of the bounded scrollback, counted in lines back from the newest. */
    readonly read: (
      owner: string | undefined,
      id: string,
      page: Terminals.PageRequest
    ) => Effect.Effect<Terminals.Page, TerminalError>
    /** Sends `signal` to the terminal's foreground process group; answers which group it was. */
    readonly signal: (
      owner: string | undefined,
      id: string,
      signal: Terminals.Signal
    ) => Effect.Effect<{ readonly pgid: number }, TerminalError>
    /** TERM, a grace, then KILL to every process of the terminal, and waits until they are gone. */
    readonly close: (owner: string | undefined, id: string) => Effect.Effect<"closed" | "already-closing", TerminalError>
    /** The owner's terminals, oldest first. */
    readonly list: (owner: string | undefined) => Effect.Effect<ReadonlyArray<Terminals.Snapshot>>
  }
>() {}

/**
 * The types of the {@link Terminals} service.
 *
 * @since 0.2.0
 * @category models
 */
export declare namespace Terminals {
  /**
   * Signals a model may send a foreground group.
   *
   * @since 0.2.0
   * @category models
   */
  export type Signal = Extract<PtySpawner.Signal, "SIGINT" | "SIGTERM" | "SIGKILL" | "SIGTSTP" | "SIGHUP">

  /**
   * What settled a send: a prompt or a read of the terminal (`stdin_read`), output silence
   * (`inferred_idle`), the absolute timeout, or the shell's exit.
   *
   * @since 0.2.0
   * @category models
   */
  export type WaitReason = "stdin_read" | "inferred_idle" | "timeout" | "session_exit"

  /**
   * @since 0.2.0
   * @category models
   */
  export type Status =
    | { readonly kind: "running" }
    | { readonly kind: "exited"; readonly exitCode: number | null; readonly signal: string | null }

  /**
   * What to open: a backend `type` (only `shell`), an optional owner-local name, where, with which
   * ordinary (`env`) and managed (`dshEnv`, `DSH_*`) variables, on a PTY of which size.
   *
   * @since 0.2.0
   * @category models
   */
  export interface OpenOptions {
    readonly type: string
    readonly name?: string
    readonly cwd?: string
    readonly env?: Readonly<Record<string, string>>
    readonly dshEnv?: Readonly<Record<string, string>>
    readonly rows?: number
    readonly cols?: number
  }

  /**
   * Text to type; `submit` (default true) presses Enter after it.
   *
   * @since 0.2.0
   * @category models
   */
  export interface Input {
    readonly text: string
    readonly submit?: boolean
  }

  /**
   * A terminal as listed.
   *
   * @since 0.2.0
   * @category models
   */
  export interface Snapshot {
    readonly id: string
    readonly name: string | undefined
    readonly type: string
    readonly pid: number
    readonly owner: string | undefined
    readonly status: Status
  }

  /**
   * A terminal just opened, with what it printed until its first prompt.
   *
   * @since 0.2.0
   * @category models
   */
  export interface Opened extends Snapshot {
    readonly startup: string
  }

  /**
   * A settled send. `output` is the terminal's text since the write (its escape sequences kept, the
   * private prompt marker removed), bounded to its newest bytes; `truncated` says older bytes were
   * dropped. Once the scrollback has dropped output, the terminal's whole transcript is in a file. `screen` is `alternate` while a full-screen program holds the terminal: what it draws
   * there is not part of `output`.
   *
   * @since 0.2.0
   * @category models
   */
  export interface SendResult {
    readonly output: string
    readonly wait: WaitReason
    readonly status: Status
    readonly truncated: boolean
    readonly screen: "normal" | "alternate"
    /** When `truncated`: the file holding the terminal's whole transcript, if it is on disk. */
    readonly transcriptPath?: string
  }

  /**
   * A consuming read of a background send's output since the last read; `truncated` says some was
   * dropped from memory in between.
   *
   * @since 0.2.0
   * @category models
   */
  export interface OutputRead {
    readonly output: string
    readonly truncated: boolean
    /** When `truncated`: the file holding the terminal's whole transcript, if it is on disk. */
    readonly transcriptPath?: string
  }

  /**
   * A send running in the terminal (a background send).
   *
   * @since 0.2.0
   * @category models
   */
  export interface SendOperation {
    /** Consuming read of the output since the last read. */
    readonly read: Effect.Effect<OutputRead>
    /** SIGINT to the foreground group; returns once delivered. */
    readonly cancel: Effect.Effect<void>
    /** The settled send; never fails. */
    readonly done: Effect.Effect<SendResult>
  }

  /**
   * `offset` lines back from the newest (default 0), `count` lines (default 500).
   *
   * @since 0.2.0
   * @category models
   */
  export interface PageRequest {
    readonly offset?: number
    readonly count?: number
  }

  /**
   * A page of the scrollback: lines `lineBegin`..`lineEnd` counted back from the newest, of
   * `totalLines` retained; `truncated` says older output is no longer retained or the page was cut.
   *
   * @since 0.2.0
   * @category models
   */
  export interface Page {
    readonly text: string
    readonly totalLines: number
    readonly lineBegin: number
    readonly lineEnd: number
    readonly truncated: boolean
    /** When `truncated`: the file holding the terminal's whole transcript, if it is on disk. */
    readonly transcriptPath?: string
  }
}
