/**
 * What a human reads of an escalation request. The command, the justification and the working
 * directory come from the model: every character that shows nothing or changes how the rest shows is
 * escaped, so none can rewrite or hide part of the question on a terminal or in a client; and the
 * model's texts are bounded, so neither can push the rest of the question out of sight.
 */
import type { Approval } from "../../services/Approval.js"

/**
 * Characters shown as escapes: controls (Cc), format characters (Cf: bidirectional marks, overrides
 * and isolates, zero-width characters, the BOM, tag characters), line and paragraph separators,
 * lone surrogates, private-use and unassigned code points, every default-ignorable code point (Hangul
 * fillers, variation selectors, …), spaces other than U+0020 (bash does not split words on them), and
 * the blank Braille pattern.
 */
const hidden = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Cs}\p{Co}\p{Cn}\p{Default_Ignorable_Code_Point}\u2800]|[^\P{Zs} ]/u

const named: Readonly<Record<string, string>> = { "\n": "\\n", "\r": "\\r", "\t": "\\t" }

/** How one code point is shown: itself, or an escape such as `\n` or `\u{200B}`. */
const shownCodePoint = (char: string): string =>
  hidden.test(char) ? named[char] ?? `\\u{${char.codePointAt(0)!.toString(16).toUpperCase()}}` : char

/**
 * At most this many characters of the shown justification (escapes counted as shown), and of the
 * shown command: enough for any honest reason and for a long script.
 */
export const shownLimits = { justification: 500, command: 4000 } as const

/** A bounded text that keeps its end shows it in a quarter of its limit. */
const tailShare = 4

/**
 * `text` with every character that could hide or rewrite a line escaped (`\n`, `\u{1B}`, `\u{200B}`,
 * …), in at most `limit` characters (escapes counted as shown) plus an elision naming how many
 * characters of `text` are not shown. With `keepTail` the elision is in the middle, so the text's end
 * (where a command can hide its payload) is shown as well.
 */
export const shownBounded = (text: string, limit: number, keepTail = false): string => {
  const pieces = Array.from(text, shownCodePoint)
  let total = 0
  for (const piece of pieces) total += piece.length
  if (total <= limit) return pieces.join("")
  const take = (budget: number, from: ReadonlyArray<string>): Array<string> => {
    const kept: Array<string> = []
    for (const piece of from) {
      if (piece.length > budget) break
      kept.push(piece)
      budget -= piece.length
    }
    return kept
  }
  const tail = keepTail ? take(Math.floor(limit / tailShare), [...pieces].reverse()).reverse() : []
  const head = take(limit - tail.reduce((sum, piece) => sum + piece.length, 0), pieces)
  const omitted = pieces.length - head.length - tail.length
  return keepTail
    ? `${head.join("")} … [${omitted} characters not shown] … ${tail.join("")}`
    : `${head.join("")} … [${omitted} more characters not shown]`
}

/** The model's justification as the user reads it. */
export const shownJustification = (request: Pick<Approval.Request, "reason">): string =>
  shownBounded(request.reason, shownLimits.justification)

/** The command as the user reads it. */
export const shownCommand = (request: Pick<Approval.Request, "command">): string =>
  shownBounded(request.command, shownLimits.command, true)

/**
 * Where and how the command would run, one `[label, value]` per fact the request carries: its working
 * directory, then whether it runs in the foreground (with its time limit) or as a background task.
 */
export const runFacts = (request: Pick<Approval.Request, "workdir" | "background" | "timeoutMs">): Array<readonly [string, string]> => [
  ...(request.workdir === undefined ? [] : [["Working directory", shownBounded(request.workdir, shownLimits.command, true)] as const]),
  ...(request.background === true
    ? [["Runs", "in the background, as a task with no time limit"] as const]
    : request.timeoutMs === undefined
    ? []
    : [["Runs", `in the foreground, stopped after ${request.timeoutMs} ms`] as const])
]
