/**
 * A {@link SessionPersistence} that keeps one JSONL file per session: `locate`
 * answers `{ kind: "jsonl", path }`, `record` appends each tool call with its structured result, and
 * `replay` reads them back without parsing any model-facing text.
 *
 * @since 0.1.0
 */
import type { PlatformError } from "@effect/platform/Error"
import * as FileSystem from "@effect/platform/FileSystem"
import * as Path from "@effect/platform/Path"
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import * as NodePath from "@effect/platform-node/NodePath"
import type * as ConfigError from "effect/ConfigError"
import * as Config from "effect/Config"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { SessionPersistence, SessionPersistenceError } from "../services/SessionPersistence.js"
import type { ToolSession } from "../services/ToolExecution.js"
import { sessionFileName } from "./internal/sessionJsonl/fileName.js"
import { decodeRecordLine, encodeRecordLine } from "./internal/sessionJsonl/recordLine.js"

/**
 * Options of {@link layer}.
 *
 * @since 0.1.0
 * @category models
 */
export interface Options {
  /** Where session files live; resolved against the working directory when relative. Created 0700 if missing. */
  readonly directory: string
}

const isNotFound = (error: PlatformError): boolean => error._tag === "SystemError" && error.reason === "NotFound"

const newline = 0x0a

const make = (config: Options) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const path = yield* Path.Path
    const directory = path.resolve(config.directory)
    // One writer at a time, so concurrent appends never interleave within this layer.
    const writer = yield* Effect.makeSemaphore(1)
    // Files this layer has already prepared (directory made, torn tail healed); guarded by `writer`.
    const prepared = new Set<string>()

    const fileOf = (session: ToolSession): Option.Option<string> =>
      Option.map(Option.fromNullable(sessionFileName(session.id)), (name) => path.join(directory, name))

    /** Makes the directory, and returns the newline to write first if the file ends in a torn line. */
    const prepare = (file: string) =>
      Effect.gen(function*() {
        yield* fs.makeDirectory(directory, { recursive: true, mode: 0o700 })
        const size = yield* fs.stat(file).pipe(
          Effect.map((info) => Number(info.size)),
          Effect.catchIf(isNotFound, () => Effect.succeed(0))
        )
        if (size === 0) return ""
        const last = yield* Effect.scoped(
          Effect.flatMap(fs.open(file, { flag: "r" }), (handle) =>
            Effect.zipRight(handle.seek(size - 1, "start"), handle.readAlloc(1)))
        )
        return Option.exists(last, (bytes) => bytes[0] === newline) ? "" : "\n"
      })

    const append = (file: string, line: string) =>
      Effect.gen(function*() {
        const heal = prepared.has(file) ? "" : yield* prepare(file)
        yield* fs.writeFileString(file, heal + line, { flag: "a", mode: 0o600 })
        prepared.add(file)
      }).pipe(
        // A failed append may have left a torn line: check the tail again next time.
        Effect.tapError(() => Effect.sync(() => prepared.delete(file))),
        writer.withPermits(1)
      )

    const locate = Effect.fn("SessionPersistence.locate")(function*(session: ToolSession) {
      return Option.map(fileOf(session), (file): SessionPersistence.Location => ({ kind: "jsonl", path: file }))
    })

    const record = Effect.fn("SessionPersistence.record")(function*(record: SessionPersistence.ToolCallRecord) {
      const file = yield* fileOf(record.session).pipe(
        Effect.mapError(() =>
          new SessionPersistenceError({ message: `cannot record tool call "${record.callId}": the session has no id` })
        )
      )
      const line = yield* Effect.try({
        try: () => encodeRecordLine(record),
        catch: (cause) =>
          new SessionPersistenceError({ message: `cannot record tool call "${record.callId}": not serializable`, cause })
      })
      yield* append(file, line).pipe(
        Effect.mapError((cause) =>
          new SessionPersistenceError({
            message: `cannot record tool call "${record.callId}" to ${file}: ${cause.message}`,
            cause
          })
        )
      )
    })

    const replay = Effect.fn("SessionPersistence.replay")(
      function*(session: ToolSession): Effect.fn.Return<ReadonlyArray<SessionPersistence.ToolCallRecord>, SessionPersistenceError> {
        const file = fileOf(session)
        if (Option.isNone(file)) return []
        const text = yield* fs.readFileString(file.value).pipe(
          Effect.catchIf(isNotFound, () => Effect.succeed("")),
          writer.withPermits(1),
          Effect.mapError((cause) =>
            new SessionPersistenceError({ message: `cannot replay ${file.value}: ${cause.message}`, cause })
          )
        )
        return text.split("\n").flatMap((line) => Option.toArray(decodeRecordLine(line)))
      }
    )

    return SessionPersistence.of({ locate, record, replay })
  })

/**
 * JSONL session persistence under `options.directory`, over the `FileSystem` and `Path` the caller
 * provides (e.g. an in-memory file system in tests).
 *
 * @since 0.1.0
 * @category layers
 */
export const layerWith = (options: Options): Layer.Layer<SessionPersistence, never, FileSystem.FileSystem | Path.Path> =>
  Layer.effect(SessionPersistence, make(options))

/**
 * JSONL session persistence under `options.directory`; needs nothing but Node.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (options: Options): Layer.Layer<SessionPersistence> =>
  layerWith(options).pipe(Layer.provide(Layer.mergeAll(NodeFileSystem.layer, NodePath.layer)))

/**
 * JSONL session persistence with its directory read through `Config`:
 * `layerConfig({ directory: Config.string("SESSIONS_DIR") })`.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerConfig = (config: Config.Config.Wrap<Options>): Layer.Layer<SessionPersistence, ConfigError.ConfigError> =>
  Layer.unwrapEffect(Effect.map(Config.unwrap(config), layer))
