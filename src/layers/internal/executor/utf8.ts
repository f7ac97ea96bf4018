/**
 * UTF-8 boundary arithmetic on raw bytes, so cuts never split a character.
 *
 * @internal
 */

const isContinuation = (byte: number): boolean => (byte & 0xc0) === 0x80

const sequenceLength = (lead: number): number =>
  lead < 0x80 ? 1 : (lead & 0xe0) === 0xc0 ? 2 : (lead & 0xf0) === 0xe0 ? 3 : (lead & 0xf8) === 0xf0 ? 4 : 1

/**
 * The first index at or after `start` that does not sit inside a character (skips at most three
 * continuation bytes; more than that is invalid input and is left for the decoder to replace).
 */
export const alignStart = (bytes: Uint8Array, start: number): number => {
  let index = start
  while (index < bytes.length && index - start < 3 && isContinuation(bytes[index]!)) index++
  return index < bytes.length && isContinuation(bytes[index]!) ? start : index
}

/**
 * The end index that excludes a trailing, still incomplete character (one whose remaining bytes may
 * arrive later).
 */
export const completeEnd = (bytes: Uint8Array, end: number = bytes.length): number => {
  for (let back = 1; back <= 3 && end - back >= 0; back++) {
    const byte = bytes[end - back]!
    if (!isContinuation(byte)) return sequenceLength(byte) > back ? end - back : end
  }
  return end
}

const decoder = new TextDecoder("utf-8", { fatal: false })

/**
 * Decodes bytes; invalid sequences become U+FFFD, never an exception.
 */
export const decodeUtf8 = (bytes: Uint8Array): string => decoder.decode(bytes)
