/**
 * Turning terminal output into text a model reads: escape sequences removed,
 * carriage-return progress folded, a sequence cut in half by truncation dropped. Spill files keep the
 * raw bytes; only model-facing text goes through here.
 */

const ESC = 0x1b
const BEL = 0x07

/** Whether `code` lies in `[low, high]`; `NaN` (past the end of the text) never does. */
const within = (code: number, low: number, high: number): boolean => code >= low && code <= high

/** The string sequences (OSC, DCS, SOS, PM, APC): ESC + `] P X ^ _`, or their C1 bytes. */
const isStringIntroducer = (code: number): boolean =>
  code === 0x5d || code === 0x50 || code === 0x58 || code === 0x5e || code === 0x5f
const isC1StringIntroducer = (code: number): boolean =>
  code === 0x9d || code === 0x90 || code === 0x98 || code === 0x9e || code === 0x9f

/** Two-byte finals: every final but the introducers `P X [ ] ^ _`. */
const isTwoByteFinal = (code: number): boolean =>
  within(code, 0x30, 0x7e) && code !== 0x50 && code !== 0x58 && code !== 0x5b && code !== 0x5d && code !== 0x5e &&
  code !== 0x5f

/**
 * Removes every complete escape sequence in one left-to-right pass, trying at each ESC or C1 byte,
 * in order: a string sequence ended by BEL or ST, CSI (ESC `[` or the C1 byte) with parameters,
 * intermediates and a final, `ESC` + intermediates + final (charset designation), and the two-byte
 * forms. A string sequence's body runs to the first BEL or ESC; that position is remembered, so a
 * run of introducers with no terminator (256 KB of U+009D) is scanned once, not once per byte.
 */
const removeCompleteSequences = (text: string): string => {
  const length = text.length
  let stopFrom = 0
  let stop = -1
  /** The first BEL or ESC at or after `from` (`length` when none). */
  const firstStop = (from: number): number => {
    if (from >= stopFrom && from <= stop) return stop
    let index = from
    while (index < length) {
      const code = text.charCodeAt(index)
      if (code === BEL || code === ESC) break
      index++
    }
    stopFrom = from
    stop = index
    return index
  }
  const stringEnd = (from: number): number => {
    const at = firstStop(from)
    if (at >= length) return -1
    if (text.charCodeAt(at) === BEL) return at + 1
    return text.charCodeAt(at + 1) === 0x5c ? at + 2 : -1
  }
  const csiEnd = (from: number): number => {
    let index = from
    while (within(text.charCodeAt(index), 0x30, 0x3f)) index++
    while (within(text.charCodeAt(index), 0x20, 0x2f)) index++
    return within(text.charCodeAt(index), 0x40, 0x7e) ? index + 1 : -1
  }
  /** The end of the complete sequence starting at `start`, or -1. */
  const sequenceEnd = (start: number, code: number): number => {
    if (code === 0x9b) return csiEnd(start + 1)
    if (code !== ESC) return isC1StringIntroducer(code) ? stringEnd(start + 1) : -1
    const next = text.charCodeAt(start + 1)
    if (isStringIntroducer(next)) return stringEnd(start + 2)
    if (next === 0x5b) return csiEnd(start + 2)
    if (within(next, 0x20, 0x2f)) {
      let index = start + 2
      while (within(text.charCodeAt(index), 0x20, 0x2f)) index++
      return within(text.charCodeAt(index), 0x30, 0x7e) ? index + 1 : -1
    }
    return isTwoByteFinal(next) ? start + 2 : -1
  }
  let result = ""
  let kept = 0
  for (let index = 0; index < length; index++) {
    const code = text.charCodeAt(index)
    if (code !== ESC && !within(code, 0x90, 0x9f)) continue
    const end = sequenceEnd(index, code)
    if (end === -1) continue
    result += text.slice(kept, index)
    kept = end
    index = end - 1
  }
  return kept === 0 ? text : result + text.slice(kept)
}

/** A sequence the text ends in the middle of (nothing will complete it). */
const unfinishedSequence = /(?:\x1b[P\]X^_][^\x07\x1b]*|(?:\x1b\[|\u009b)[0-?]*[ -/]*|\x1b[ -/]*)$/

/** ESC bytes that begin nothing recognisable. */
const strayEscape = /\x1b/g

/** The end of a string sequence whose start was cut off: text up to a BEL or ST on the first line. */
const cutStringSequence = /^[^\x1b\x07\n]*(?:\x07|\x1b\\)/

/**
 * The end of a control sequence whose start was cut off: parameters and a letter final (`[31m`,
 * `1;31m`, `0m`, `?25l`). Plain text can look like that (`10ms`), so it is only taken for a remnant
 * in output that carries control sequences elsewhere.
 */
const cutControlSequence = /^\[?[0-?]+[ -/]*[A-Za-z@`]/

const dropCutHead = (text: string): string => {
  const withoutString = text.replace(cutStringSequence, "")
  if (withoutString !== text) return withoutString
  return text.includes("\x1b[") ? text.replace(cutControlSequence, "") : text
}

/**
 * Removes ANSI escape sequences (complete ones anywhere, an unfinished one at the end, stray ESC
 * bytes), in time linear in the text's length.
 */
export const stripAnsi = (text: string): string =>
  removeCompleteSequences(text).replace(unfinishedSequence, "").replace(strayEscape, "")

/**
 * Folds carriage-return progress: within a line, a `\r` not followed by `\n` means "overwrite", so
 * the line keeps only its last non-empty segment (`10%\r50%\r100%\n` → `100%\n`; a trailing `\r`
 * erases nothing, as on a terminal). `\r\n` line endings stay exactly as they came.
 */
export const foldCarriageReturns = (text: string): string => {
  if (!text.includes("\r")) return text
  const lines = text.split("\n")
  return lines
    .map((line, index) => {
      const crlf = index < lines.length - 1 && line.endsWith("\r")
      const body = crlf ? line.slice(0, -1) : line
      if (!body.includes("\r")) return line
      const kept = body.split("\r").filter((segment) => segment !== "").at(-1) ?? ""
      return crlf ? `${kept}\r` : kept
    })
    .join("\n")
}

/**
 * Model-facing text of one stream. `cut` says the text is a tail whose start may fall inside an
 * escape sequence; that remnant is dropped before the sequences are stripped.
 */
export const modelText = (text: string, cut: boolean): string =>
  foldCarriageReturns(stripAnsi(cut ? dropCutHead(text) : text))

/** The most a tail loses to start at a line: 1 KiB of characters, and never more than an eighth of it. */
const lineSearchLength = (length: number): number => Math.min(1024, Math.floor(length / 8))

/**
 * Model-facing text of a truncated stream's tail, which the byte budget cut mid-line: it starts after
 * its first line break when that break lies within its first 1024 characters and its first eighth
 * (the partial line before it is dropped, with any escape sequence the cut split); otherwise it is
 * kept whole, less the remnant of a split escape sequence. Slicing a decoded string after a `\n`
 * never splits a character.
 */
export const tailText = (text: string): string => {
  const start = text.slice(0, lineSearchLength(text.length)).indexOf("\n") + 1
  return start > 0 ? modelText(text.slice(start), false) : modelText(text, true)
}
