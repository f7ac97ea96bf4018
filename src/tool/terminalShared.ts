/**
 * What the six terminal tools share: the `sessionId` parameter, the status schema, the cleaning of
 * terminal output into model text, the result cap and the texts the reference's tools render.
 */
import { Buffer } from "node:buffer"
import * as Schema from "effect/Schema"
import type { AgentTools } from "../services/AgentTools.js"
import { echoValue } from "../services/internal/requestChecks.js"
import type { Terminals } from "../services/Terminals.js"
import { expecting, isNonBlank, required } from "./AgentTool.js"
import { modelText } from "./modelText.js"

const sessionIdMessage = (actual: unknown) => `invalid sessionId: expected a non-empty string, got ${echoValue(actual)}`

/**
 * `sessionId`: a non-empty terminal id. A missing or non-string id gets our per-field message (the
 * reference leaves those to the harness registry's schema check); an empty one the reference tool's
 * own text.
 */
export const sessionId = (description: string) =>
  required(
    expecting(Schema.String, description, sessionIdMessage).pipe(
      Schema.filter((id) => isNonBlank(id) || "sessionId must be a non-empty string")
    ),
    sessionIdMessage
  )

/**
 * A terminal's status as values carry it.
 */
export const Status = Schema.Union(
  Schema.Struct({ kind: Schema.Literal("running") }),
  Schema.Struct({
    kind: Schema.Literal("exited"),
    exitCode: Schema.NullOr(Schema.Number),
    signal: Schema.NullOr(Schema.String)
  })
) satisfies Schema.Schema<Terminals.Status, any>

/**
 * A terminal as listed (the reference's snapshot).
 */
export const Snapshot = Schema.Struct({
  sessionId: Schema.String,
  name: Schema.optionalWith(Schema.String, { exact: true }),
  type: Schema.String,
  pid: Schema.Number,
  status: Status
})

/** `running`, or `exited code=<n|null> signal=<name|null>`. */
export const renderStatus = (status: Terminals.Status): string =>
  status.kind === "running"
    ? "running"
    : `exited code=${status.exitCode ?? "null"} signal=${status.signal ?? "null"}`

/**
 * Terminal output as a model reads it: escape sequences removed and `\r` redraws folded as the
 * `bash` tool's text is, line endings `\n`, bells dropped. `cut` says older output was dropped.
 */
export const terminalText = (raw: string, cut: boolean): string =>
  modelText(raw, cut).replaceAll("\r\n", "\n").replaceAll("\r", "\n").replaceAll("\x07", "")

/**
 * The cap of one complete terminal result, in UTF-8 bytes (the reference's default).
 */
export const maxResultBytes = 256 * 1024

const truncatedMarker = "\n[output truncated]"

/**
 * The line that says older output was dropped: with the path of the terminal's whole transcript when
 * it is on disk (as the `bash` tool names its spill file), else the reference's plain marker.
 */
export const truncationLine = (transcriptPath: string | undefined): string =>
  transcriptPath === undefined ? "[output truncated]" : `[output truncated; full transcript: ${transcriptPath}]`

/** The newest `maxBytes` bytes of `text`, never splitting a character. */
const utf8Tail = (text: string, maxBytes: number): string => {
  const bytes = Buffer.from(text, "utf8")
  if (bytes.length <= maxBytes) return text
  let start = bytes.length - maxBytes
  while (start < bytes.length && (bytes[start]! & 0xc0) === 0x80) start++
  return bytes.subarray(start).toString("utf8")
}

/**
 * `content` then `metadata`, and the {@link truncationLine} when `truncated`; over
 * {@link maxResultBytes} the content keeps its newest bytes and the line is added.
 */
export const boundBody = (content: string, metadata: string, truncated: boolean, transcriptPath?: string): string => {
  const marker = `\n${truncationLine(transcriptPath)}`
  const complete = `${content}${metadata}${truncated ? marker : ""}`
  if (Buffer.byteLength(complete) <= maxResultBytes) return complete
  const suffix = `${metadata}${marker}`
  return `${utf8Tail(content, maxResultBytes - Buffer.byteLength(suffix))}${suffix}`
}

/**
 * `prefix` then `content`; over {@link maxResultBytes} the prefix stays whole, the content keeps its
 * newest bytes and the truncation marker follows.
 */
export const boundWithPrefix = (prefix: string, content: string): string => {
  const complete = `${prefix}${content}`
  if (Buffer.byteLength(complete) <= maxResultBytes) return complete
  const room = maxResultBytes - Buffer.byteLength(`${prefix}${truncatedMarker}`)
  return `${prefix}${utf8Tail(content, room)}${truncatedMarker}`
}

/**
 * The line a result adds while a full-screen program holds the terminal.
 */
export const alternateScreenLine =
  "\n[screen: a full-screen program holds the terminal (alternate screen); its screen is not shown]"

const stringArg = (args: unknown, key: string): string => {
  const value = typeof args === "object" && args !== null ? (args as Readonly<Record<string, unknown>>)[key] : undefined
  return typeof value === "string" ? value : "?"
}

/**
 * An execute card titled from the stored arguments, with the text the model read as its detail.
 */
export const executeCards = <Value>(title: (args: unknown) => string, render: (value: Value) => string) => ({
  presentCall: (args: unknown): AgentTools.Presentation => ({ kind: "execute", title: title(args) }),
  presentResult: (args: unknown, value: Value): AgentTools.Presentation => ({
    kind: "execute",
    title: title(args),
    detail: render(value)
  })
})

/**
 * The `sessionId` of stored arguments, `?` when there is none.
 */
export const sessionIdOf = (args: unknown): string => stringArg(args, "sessionId")

/**
 * The guidance the terminal tools add to the system prompt (the reference's text).
 */
export const guidance =
  "Use a terminal session only when work needs persistent terminal state or interactive stdin; prefer shell/read/write/edit for bounded one-shot operations. Track every terminal session id and close sessions that no longer matter. An inferred_idle or timeout result does not prove the foreground command exited."
