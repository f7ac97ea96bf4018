/**
 * One {@link SessionPersistence.ToolCallRecord} per line of JSON, and back.
 *
 * @internal
 */
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import type { SessionPersistence } from "../../../services/SessionPersistence.js"

const StoredRecord = Schema.Struct({
  session: Schema.Struct({
    id: Schema.String,
    cwd: Schema.optionalWith(Schema.String, { exact: true })
  }),
  callId: Schema.String,
  toolName: Schema.String,
  arguments: Schema.Unknown,
  isError: Schema.Boolean,
  result: Schema.Unknown,
  text: Schema.String
})

const decodeStored = Schema.decodeUnknownOption(StoredRecord)

/**
 * The record as one line, newline included; throws when the record is not JSON-serializable.
 */
export const encodeRecordLine = (record: SessionPersistence.ToolCallRecord): string => `${JSON.stringify(record)}\n`

/**
 * The record a line holds; `none` for a line that is not an intact record (a torn append).
 */
export const decodeRecordLine = (line: string): Option.Option<SessionPersistence.ToolCallRecord> => {
  if (line.trim() === "") return Option.none()
  try {
    return decodeStored(JSON.parse(line))
  } catch {
    return Option.none()
  }
}
