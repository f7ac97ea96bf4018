/**
 * The JSONL file name of a session: one file per session id, which can never leave its directory.
 *
 * @internal
 */
import * as NodeCrypto from "node:crypto"

const plain = /^[A-Za-z0-9._-]$/

/** Longest encoded id kept verbatim; file names stay well under the usual 255-byte limit. */
const maxEncodedLength = 200

/**
 * `<encoded id>.jsonl`, or `undefined` for an empty id. The encoding is injective (distinct ids never
 * share a file): characters outside `[A-Za-z0-9._-]` — including `/` and `%` — become `%` plus four hex
 * digits of their UTF-16 code unit. An encoded id longer than 200 characters is shortened to a prefix,
 * `%-` and the SHA-256 of the id.
 */
export const sessionFileName = (sessionId: string): string | undefined => {
  if (sessionId === "") return undefined
  let encoded = ""
  for (let index = 0; index < sessionId.length; index++) {
    const char = sessionId.charAt(index)
    encoded += plain.test(char) ? char : `%${sessionId.charCodeAt(index).toString(16).toUpperCase().padStart(4, "0")}`
  }
  if (encoded.length > maxEncodedLength) {
    const digest = NodeCrypto.createHash("sha256").update(sessionId, "utf8").digest("hex")
    // `%-` never occurs in a verbatim name (every `%` there starts four hex digits): no collisions.
    encoded = `${encoded.slice(0, 100)}%-${digest}`
  }
  return `${encoded}.jsonl`
}
