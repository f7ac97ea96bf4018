/**
 * One line of the MCP stdio protocol (or one message of another transport), judged: a JSON-RPC
 * message for the server, or the error answer a malformed one gets. JSON-RPC 2.0 answers every request it cannot take (-32700 for text that is
 * not JSON, -32600 for JSON that is not a valid message), with the request's id when it can be read
 * and `null` otherwise; the SDK's own stdio transport only logs such lines, leaving a client that
 * sent an id waiting forever.
 */
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js"
import { ErrorCode, JSONRPCMessageSchema } from "@modelcontextprotocol/sdk/types.js"

/**
 * What to do with one line.
 */
export type LineVerdict =
  | { readonly _tag: "Message"; readonly message: JSONRPCMessage }
  /** Answer `reply` and report `problem`. */
  | { readonly _tag: "Reply"; readonly reply: ErrorReply; readonly problem: string }
  /** A malformed response (no one waits for an answer to it): report `problem` only. */
  | { readonly _tag: "Ignore"; readonly problem: string }

type Id = string | number | null

/**
 * A JSON-RPC error answer; its id is `null` when the request's id could not be read.
 */
export interface ErrorReply {
  readonly jsonrpc: "2.0"
  readonly id: Id
  readonly error: { readonly code: number; readonly message: string }
}

const errorReply = (id: Id, code: number, message: string): ErrorReply => ({ jsonrpc: "2.0", id, error: { code, message } })

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

// JSON turns 1e400 into Infinity, which has no JSON form: such an id is answered as null.
const readableId = (value: unknown): Id =>
  typeof value === "string" || (typeof value === "number" && Number.isFinite(value)) ? value : null

const invalidReason = (message: Record<string, unknown>): string => {
  if (message.jsonrpc !== "2.0") return `"jsonrpc" must be "2.0"`
  if ("id" in message && readableId(message.id) === null) return `"id" must be a string or a number`
  if (typeof message.id === "number" && !Number.isSafeInteger(message.id)) {
    return `"id" ${message.id} is not taken here: use a string or an integer of at most 2^53-1 in magnitude`
  }
  if ("method" in message && typeof message.method !== "string") return `"method" must be a string`
  if ("params" in message && !isRecord(message.params)) return `"params" must be an object`
  return "not a JSON-RPC 2.0 request, notification or response"
}

const invalidRequest = (id: Id, reason: string): LineVerdict => ({
  _tag: "Reply",
  reply: errorReply(id, ErrorCode.InvalidRequest, `Invalid Request: ${reason}`),
  problem: `invalid JSON-RPC message (id ${JSON.stringify(id)}): ${reason}`
})

/**
 * Judges one decoded message (a line's JSON, or what a transport delivered).
 */
export const judgeMessage = (value: unknown): ReadonlyArray<LineVerdict> => {
  if (Array.isArray(value)) {
    // MCP (2025-06-18) has no batches: every request in one is answered as invalid.
    const ids = value.flatMap((item) => (isRecord(item) && "id" in item && !("result" in item || "error" in item) ? [readableId(item.id)] : []))
    return (ids.length === 0 ? [null] : ids).map((id) => invalidRequest(id, "batches are not supported"))
  }
  if (!isRecord(value)) return [invalidRequest(null, "expected a JSON object")]
  const parsed = JSONRPCMessageSchema.safeParse(value)
  if (parsed.success) return [{ _tag: "Message", message: parsed.data }]
  const reason = invalidReason(value)
  if (!("method" in value) && ("result" in value || "error" in value)) {
    return [{ _tag: "Ignore", problem: `invalid JSON-RPC response: ${reason}` }]
  }
  return [invalidRequest(readableId(value.id), reason)]
}

/**
 * A step between parsing a line and judging it: `value` is the line's JSON (see `rawIds.ts`).
 */
export type Admit = (value: unknown, line: string) => unknown

const asParsed: Admit = (value) => value

/**
 * Judges one complete line (without its newline), its JSON passed through `admit` first. A blank
 * line is nothing.
 */
export const judgeLine = (line: string, admit: Admit = asParsed): ReadonlyArray<LineVerdict> => {
  if (line.trim() === "") return []
  let value: unknown
  try {
    value = JSON.parse(line)
  } catch (error) {
    const detail = error instanceof Error ? error.message : String(error)
    return [{
      _tag: "Reply",
      reply: errorReply(null, ErrorCode.ParseError, "Parse error: the line is not valid JSON"),
      problem: `unparsable line: ${detail.slice(0, 200)}`
    }]
  }
  return judgeMessage(admit(value, line))
}

// The id of a well-formed message is either among its first keys (`{"jsonrpc":"2.0","id":1,...`, as
// most clients write it) or its last key (the official SDK writes `{"method",…,"jsonrpc","id"}`).
const idPattern = String.raw`"id"\s*:\s*(-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?|"(?:[^"\\]|\\.)*")`
const leadingId = new RegExp(String.raw`^\s*\{\s*(?:"jsonrpc"\s*:\s*"2\.0"\s*,\s*)?${idPattern}\s*[,}]`)
const trailingId = new RegExp(String.raw`[{,]\s*${idPattern}\s*\}\s*$`)

/**
 * The answer to a line longer than the read limit, which is dropped unread: its id is recovered
 * from the line's `head` and `tail` (the first and last few hundred bytes) when it can be.
 */
export const judgeOversizeLine = (head: string, tail: string, limit: number, admit: Admit = asParsed): LineVerdict => {
  const text = (leadingId.exec(head) ?? trailingId.exec(tail))?.[1]
  const admitted = text === undefined ? undefined : admit({ id: JSON.parse(text) }, `{"id":${text}}`)
  const id = isRecord(admitted) ? readableId(admitted.id) : null
  return invalidRequest(id, `the message is longer than ${limit} bytes`)
}
