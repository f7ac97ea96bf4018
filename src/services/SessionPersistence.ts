/**
 * Where sessions are stored, and the record of each tool call for replay.
 */
import type * as Effect from "effect/Effect"
import type * as Option from "effect/Option"
import * as Context from "effect/Context"
import * as Data from "effect/Data"
import type { ToolSession } from "./ToolExecution.js"

/**
 * A record could not be stored.
 *
 * @since 0.1.0
 * @category errors
 */
export class SessionPersistenceError extends Data.TaggedError("SessionPersistenceError")<{
  readonly message: string
  readonly cause?: unknown
}> {}

/**
 * The persistence seam.
 *
 * @since 0.1.0
 * @category tags
 */
export class SessionPersistence extends Context.Tag("effect-bash/SessionPersistence")<
  SessionPersistence,
  {
    readonly locate: (session: ToolSession) => Effect.Effect<Option.Option<SessionPersistence.Location>>
    /** Appends one call; backends without storage ignore it. */
    readonly record: (record: SessionPersistence.ToolCallRecord) => Effect.Effect<void, SessionPersistenceError>
    /** Every stored record of a session, oldest first. */
    readonly replay: (session: ToolSession) => Effect.Effect<ReadonlyArray<SessionPersistence.ToolCallRecord>, SessionPersistenceError>
  }
>() {}

/**
 * The types of the {@link SessionPersistence} service.
 *
 * @since 0.1.0
 * @category models
 */
export declare namespace SessionPersistence {
  /**
   * Where a session's artifact lives; a location hint, never a credential.
   *
   * @since 0.1.0
   * @category models
   */
  export interface Location {
    readonly kind: string
    readonly path: string
  }

  /**
   * One tool call and its structured result, as appended for replay.
   *
   * @since 0.1.0
   * @category models
   */
  export interface ToolCallRecord {
    readonly session: ToolSession
    readonly callId: string
    readonly toolName: string
    readonly arguments: unknown
    readonly isError: boolean
    /** The canonical result value (or `{ message }` for an error). */
    readonly result: unknown
    /** The text the model saw. */
    readonly text: string
  }
}
