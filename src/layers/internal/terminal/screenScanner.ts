/**
 * Reads a terminal's output stream for the two facts readiness needs and keeps the rest as it came:
 * the private prompt marker (an OSC `133;D;` sequence the controlled `PROMPT_COMMAND` prints), and
 * the alternate screen a full-screen program switches to (`CSI ?1049h`, `?1047h`, `?47h`; `l` leaves
 * it). Everything else passes through raw; model text is cleaned later, as the bash tool's is.
 *
 * @internal
 */

/** A marker seen in the stream, among the printable pieces {@link ScreenScanner.push} returns. */
export const PromptMarker: unique symbol = Symbol("PromptMarker")

/** What one chunk held: the raw text kept, and in order its printable pieces and markers. */
export interface Scanned {
  readonly kept: string
  readonly pieces: ReadonlyArray<string | typeof PromptMarker>
}

const ESC = "\x1b"
const BEL = "\x07"
const alternateMode = /^\?(?:1049|1047|47)$/

/** A sequence longer than this that never ends is not one: it is passed on as text. */
const maxPending = 4096

/** The scanner of one terminal: it carries a sequence split across chunks to the next one. */
export class ScreenScanner {
  private pending = ""
  alternate = false

  push(chunk: string): Scanned {
    const text = this.pending + chunk
    this.pending = ""
    let kept = ""
    const pieces: Array<string | typeof PromptMarker> = []
    const keep = (raw: string, printable: string) => {
      if (this.alternate) return
      kept += raw
      if (printable.length > 0) pieces.push(printable)
    }
    let index = 0
    while (index < text.length) {
      const escape = text.indexOf(ESC, index)
      if (escape < 0) {
        keep(text.slice(index), text.slice(index))
        break
      }
      keep(text.slice(index, escape), text.slice(index, escape))
      const end = sequenceEnd(text, escape)
      if (end < 0) {
        // Unfinished: carried to the next chunk, unless it is too long to be a sequence.
        if (text.length - escape > maxPending) keep(text.slice(escape), "")
        else this.pending = text.slice(escape)
        break
      }
      const sequence = text.slice(escape, end)
      if (sequence[1] === "]" && sequence.startsWith("133;D;", 2)) {
        pieces.push(PromptMarker)
      } else if (sequence[1] === "[" && alternateMode.test(sequence.slice(2, -1)) && /[hl]$/.test(sequence)) {
        const entering = sequence.endsWith("h")
        if (!entering) this.alternate = false
        keep(sequence, "")
        this.alternate = entering
      } else {
        keep(sequence, "")
      }
      index = end
    }
    return { kept, pieces }
  }

  /** The carried fragment, once the stream has ended. */
  flush(): string {
    const rest = this.pending
    this.pending = ""
    return this.alternate ? "" : rest
  }
}

/** The end of the escape sequence at `start`, or -1 when the text ends inside it. */
const sequenceEnd = (text: string, start: number): number => {
  const kind = text[start + 1]
  if (kind === undefined) return -1
  if (kind === "]" || kind === "P" || kind === "_" || kind === "^" || kind === "X") {
    const bel = text.indexOf(BEL, start + 2)
    const st = text.indexOf(`${ESC}\\`, start + 2)
    if (bel < 0 && st < 0) return -1
    return bel >= 0 && (st < 0 || bel < st) ? bel + 1 : st + 2
  }
  if (kind === "[") {
    for (let index = start + 2; index < text.length; index++) {
      const code = text.charCodeAt(index)
      if (code >= 0x40 && code <= 0x7e) return index + 1
    }
    return -1
  }
  let index = start + 1
  while (index < text.length && text.charCodeAt(index) >= 0x20 && text.charCodeAt(index) <= 0x2f) index++
  return index < text.length ? index + 1 : -1
}
