/**
 * A {@link SessionPersistence} that stores nothing: no location, records dropped, nothing to replay.
 *
 * @since 0.1.0
 */
import { Effect, Layer, Option } from "effect"
import { SessionPersistence } from "../services/SessionPersistence.js"

/**
 * Persistence for compositions that keep no sessions.
 *
 * @since 0.1.0
 */
export const SessionPersistenceNone = {
  /** Locates nothing, ignores every record, replays nothing. */
  layer: Layer.succeed(
    SessionPersistence,
    SessionPersistence.of({
      locate: () => Effect.succeed(Option.none<SessionPersistence.Location>()).pipe(Effect.withSpan("SessionPersistence.locate")),
      record: () => Effect.void.pipe(Effect.withSpan("SessionPersistence.record")),
      replay: () => Effect.succeed<ReadonlyArray<SessionPersistence.ToolCallRecord>>([]).pipe(Effect.withSpan("SessionPersistence.replay"))
    })
  )
}
