/**
 * Turning terminal output into text a model reads (CONTRACT §2 Beyond): escape sequences removed,
 * carriage-return progress folded, a sequence cut in half by truncation dropped. Spill files keep the
 * raw bytes; only model-facing text goes through here.
 *
 * @since 0.1.0
 */

/**
 * Complete escape sequences, longest forms first: string sequences (OSC, DCS, SOS, PM, APC) ended by
 * BEL or ST, CSI (ESC `[` or the C1 byte), `ESC` + intermediates + final (charset designation), and
 * the two-byte forms (every final but the introducers `P X [ ] ^ _`).
 */
const escapeSequence =
  /(?:\x1b[P\]X^_]|[\u0090\u009d\u0098\u009e\u009f])[^\x07\x1b]*(?:\x07|\x1b\\)|(?:\x1b\[|\u009b)[0-?]*[ -/]*[@-~]|\x1b[ -/]+[0-~]|\x1b[0-OQ-WYZ\\`-~]/g

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
 * bytes).
 *
 * @since 0.1.0
 */
export const stripAnsi = (text: string): string =>
  text.replace(escapeSequence, "").replace(unfinishedSequence, "").replace(strayEscape, "")

/**
 * Folds carriage-return progress: within a line, a `\r` not followed by `\n` means "overwrite", so
 * the line keeps only its last non-empty segment (`10%\r50%\r100%\n` → `100%\n`; a trailing `\r`
 * erases nothing, as on a terminal). `\r\n` line endings stay exactly as they came.
 *
 * @since 0.1.0
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
 *
 * @since 0.1.0
 */
export const modelText = (text: string, cut: boolean): string =>
  foldCarriageReturns(stripAnsi(cut ? dropCutHead(text) : text))
