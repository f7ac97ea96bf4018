/**
 * The generic background-task runtime: ids, owner isolation, consuming reads,
 * waiting, cancellation, completion notices and disposal. Producers (the `bash` tool) hand it a
 * {@link Tasks.Work}; the runtime never knows what the work is.
 */
import type * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import type * as Stream from "effect/Stream"
import * as Context from "effect/Context"
import * as Data from "effect/Data"
import { capEchoed } from "./internal/requestChecks.js"

/**
 * Whether a task has ended (`completed`, `killed` or `failed`).
 *
 * @since 0.1.0
 * @category utils
 */
export const isTerminalStatus = (status: Tasks.Status): boolean => status !== "running" && status !== "stopping"

/**
 * Background tasks cannot be started: nothing controls them, or nothing runs them.
 *
 * @since 0.1.0
 * @category errors
 */
export class TasksUnavailableError extends Data.TaggedError("TasksUnavailableError")<{
  readonly message: string
}> {}

/**
 * The id is unknown (`unknown task <id>`) or belongs to another session
 * (`task <id> belongs to another session`).
 *
 * @since 0.1.0
 * @category errors
 */
export class TaskAccessError extends Data.TaggedError("TaskAccessError")<{
  readonly id: string
  readonly reason: "unknown" | "foreign"
}> {
  override get message(): string {
    return this.reason === "unknown" ? `unknown task ${this.id}` : `task ${this.id} belongs to another session`
  }
}

/**
 * A wait timeout that is not a positive number of milliseconds.
 *
 * @since 0.1.0
 * @category errors
 */
export class InvalidWaitTimeoutError extends Data.TaggedError("InvalidWaitTimeoutError")<{
  readonly value: unknown
}> {
  override get message(): string {
    return `invalid wait timeout: expected a positive number of milliseconds, got ${displayed(this.value)}`
  }
}

// `String` throws for an object whose `toString` is not callable (`{"toString":"x"}` from a model);
// a huge value is capped like every echoed value.
const displayed = (value: unknown): string => {
  try {
    return capEchoed(String(value))
  } catch {
    return Object.prototype.toString.call(value)
  }
}

/**
 * The task runtime. `caller` arguments are the calling session id (undefined outside a session).
 *
 * @since 0.1.0
 * @category tags
 */
export class Tasks extends Context.Tag("effect-bash/Tasks")<
  Tasks,
  {
    /** Attaches a control surface (the task tools) for the lifetime of the calling scope. */
    readonly attachSurface: Effect.Effect<void, never, Scope.Scope>
    /**
     * Checks that a surface is attached **before** running `launch`, then tracks the work under a
     * fresh `<kind>-<n>` id. `launch` receives that id.
     */
    readonly start: <E, R>(
      meta: Tasks.Meta,
      launch: (id: string) => Effect.Effect<Tasks.Work, E, R>
    ) => Effect.Effect<Tasks.Snapshot, E | TasksUnavailableError, R>
    readonly get: (id: string, caller: string | undefined) => Effect.Effect<Tasks.Snapshot, TaskAccessError>
    /** Consuming read of new output plus the snapshot taken after it. */
    readonly read: (
      id: string,
      caller: string | undefined
    ) => Effect.Effect<{ readonly output: string; readonly task: Tasks.Snapshot }, TaskAccessError>
    /** The snapshot once terminal, or at the timeout (the task stays alive). Clock-driven. */
    readonly wait: (
      id: string,
      timeoutMs: number,
      caller: string | undefined
    ) => Effect.Effect<Tasks.Snapshot, TaskAccessError | InvalidWaitTimeoutError>
    /** Tasks visible to the caller, oldest first. */
    readonly list: (caller: string | undefined) => Effect.Effect<ReadonlyArray<Tasks.Snapshot>>
    readonly kill: (
      id: string,
      caller: string | undefined
    ) => Effect.Effect<"requested" | "already-finished", TaskAccessError>
    /** Marks a terminal task as reported to its owner (its status was shown), so no notice is sent. */
    readonly markReported: (id: string) => Effect.Effect<void>
    /** Each finished, unreported task exactly once, as it finishes. */
    readonly notifications: Stream.Stream<Tasks.Notice>
  }
>() {}

/**
 * The types of the {@link Tasks} service.
 *
 * @since 0.1.0
 * @category models
 */
export declare namespace Tasks {
  /**
   * Lifecycle of a task.
   *
   * @since 0.1.0
   * @category models
   */
  export type Status = "running" | "stopping" | "completed" | "killed" | "failed"

  /**
   * How a piece of work ended, with a producer-supplied detail (`exit code: 0`, `signal: SIGTERM`).
   *
   * @since 0.1.0
   * @category models
   */
  export interface Outcome {
    readonly status: "completed" | "killed" | "failed"
    readonly detail?: string
  }

  /**
   * What a producer hands the runtime once its work has started.
   *
   * @since 0.1.0
   * @category models
   */
  export interface Work {
    /** Consuming read of new output, already rendered for a model (may be empty). */
    readonly read: Effect.Effect<string>
    /** Asks the work to stop; returns once the request is delivered (not when the work has stopped). */
    readonly cancel: Effect.Effect<void>
    /** Completes when the work has stopped; never fails. */
    readonly done: Effect.Effect<Outcome>
  }

  /**
   * What the runtime knows about a task before its work starts.
   *
   * @since 0.1.0
   * @category models
   */
  export interface Meta {
    /** Id prefix and kind shown in listings, e.g. `bash`. */
    readonly kind: string
    /** A short human label, e.g. the command. */
    readonly label: string
    /** The owning session; an owned task is visible only to its owner. */
    readonly owner?: string
  }

  /**
   * A point-in-time view of a task.
   *
   * @since 0.1.0
   * @category models
   */
  export interface Snapshot {
    readonly id: string
    readonly kind: string
    readonly label: string
    readonly owner: string | undefined
    readonly status: Status
    /** Outcome detail once terminal: `exit code: N`, `signal: SIGTERM`, `killed before exit`. */
    readonly detail: string | undefined
  }

  /**
   * A finished task its owner has not yet been told about.
   *
   * @since 0.1.0
   * @category models
   */
  export interface Notice {
    readonly owner: string | undefined
    readonly task: Snapshot
  }
}
