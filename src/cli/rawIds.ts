/**
 * JSON-RPC ids that JavaScript numbers cannot hold exactly, kept as they were written. JSON-RPC 2.0
 * allows any number as an id, and the answer must carry the same id; `JSON.parse` turns
 * `9007199254740993` into `9007199254740992` and `1e400` into `Infinity`, and the SDK takes only safe
 * integers. Such an id is replaced by a placeholder string on the way in and written back as its
 * original text on the way out. The original text is read with `lossless-json`, only for the rare
 * message that has such an id.
 */
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js"
import { isLosslessNumber, parse } from "lossless-json"
import { randomUUID } from "node:crypto"

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

/** A number id the SDK cannot take or echo exactly. */
const isInexact = (id: unknown): id is number => typeof id === "number" && !Number.isSafeInteger(id)

/** The text of the number at `path` in `line`, as written; `undefined` when it cannot be read. */
const numberText = (line: string, path: ReadonlyArray<string>): string | undefined => {
  let value: unknown
  try {
    value = parse(line)
  } catch {
    // lossless-json refuses what JSON.parse takes (duplicate keys): the id stays as JSON.parse read it.
    return undefined
  }
  for (const key of path) value = isRecord(value) ? value[key] : undefined
  return isLosslessNumber(value) ? value.value : undefined
}

/**
 * The placeholders of one transport's inexact ids. A placeholder is a fixed prefix and the id's text,
 * so a later `notifications/cancelled` for the same id names the same placeholder.
 */
export class RawIds {
  // A client's own string id cannot be mistaken for a placeholder.
  private readonly prefix = `effect-bash-id-${randomUUID()}:`

  /**
   * `value` (parsed from `line`) with an inexact request id, or the inexact `requestId` of a
   * `notifications/cancelled`, replaced by its placeholder.
   */
  readonly admit = (value: unknown, line: string): unknown => {
    if (!isRecord(value)) return value
    if (isInexact(value.id)) {
      const placeholder = this.placeholder(line, ["id"])
      return placeholder === undefined ? value : { ...value, id: placeholder }
    }
    const params = value.params
    if (value.method === "notifications/cancelled" && isRecord(params) && isInexact(params.requestId)) {
      const placeholder = this.placeholder(line, ["params", "requestId"])
      return placeholder === undefined ? value : { ...value, params: { ...params, requestId: placeholder } }
    }
    return value
  }

  /**
   * The line for an outgoing message, a placeholder id written as the original text.
   */
  readonly serialize = (message: JSONRPCMessage | { readonly id: unknown }): string => {
    const id = "id" in message ? message.id : undefined
    if (typeof id !== "string" || !id.startsWith(this.prefix)) return JSON.stringify(message)
    const { id: _, ...rest } = message as { readonly id: unknown }
    const body = JSON.stringify(rest)
    const text = id.slice(this.prefix.length)
    return body === "{}" ? `{"id":${text}}` : `{"id":${text},${body.slice(1)}`
  }

  private placeholder(line: string, path: ReadonlyArray<string>): string | undefined {
    const text = numberText(line, path)
    return text === undefined ? undefined : `${this.prefix}${text}`
  }
}
