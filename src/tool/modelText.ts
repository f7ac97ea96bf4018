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
 * the two-byte forms.
 */
const escapeSequence =
  /(?:\x1b[P\]X^_]|[\u0090\u009d\u0098\u009e\u009f])[^\x07\x1b]*(?:\x07|\x1b\\)|(?:\x1b\[|\u009b)[0-?]*[ -/]*[@-~]|\x1b[ -/]+[0-~]|\x1b[0-~]/g

/** A sequence the text ends in the middle of (nothing will complete it). */
const unfinishedSequence = /(?:\x1b[P\]X^_][^\x07\x1b]*|(?:\x1b\[|\u009b)[0-?]*[ -/]*|\x1b[ -/]*)$/

/** ESC bytes that begin nothing recognisable. */
const strayEscape = /\x1b/g

/**
 * What a tail cut can leave of a sequence at the very start of the text: the end of a string
 * sequence (up to its BEL/ST), a CSI that lost only its ESC (`[31m`), CSI parameters with a
 * separator (`1;31m`), or a bare SGR remnant (`0m`) when the text is coloured elsewhere.
 */
const cutSequenceHead =
  /^(?:[^\x1b\x07\n]*(?:\x07|\x1b\\)|\[[0-?]*[ -/]*[@-~]|[0-?]*[;?<=>][0-?]*[ -/]*[@-~]|\d{1,3}m(?=[\s\S]*\x1b\[))/

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
  foldCarriageReturns(stripAnsi(cut ? text.replace(cutSequenceHead, "") : text))
