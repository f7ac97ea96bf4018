/**
 * Text kept to its newest `maxBytes` UTF-8 bytes and, optionally, its newest `maxLines` lines:
 * appending costs the chunk, not the text kept, so a flood stays linear.
 *
 * @internal
 */
import { Buffer } from "node:buffer"

const countLines = (text: string): number => {
  let count = 0
  for (let index = text.indexOf("\n"); index >= 0; index = text.indexOf("\n", index + 1)) count++
  return count
}

/** Where `text` goes on after its first `lines` lines (all of it, when it has fewer). */
const lineCut = (text: string, lines: number): number => {
  let cut = 0
  for (let line = 0; line < lines && cut < text.length; line++) {
    const end = text.indexOf("\n", cut)
    cut = end < 0 ? text.length : end + 1
  }
  return cut
}

/** The suffix of `text` after its first `bytes` UTF-8 bytes, never splitting a character. */
const dropBytes = (text: string, bytes: number): string => {
  let dropped = 0
  let index = 0
  while (index < text.length && dropped < bytes) {
    const code = text.codePointAt(index)!
    dropped += code < 0x80 ? 1 : code < 0x800 ? 2 : code < 0x10000 ? 3 : 4
    index += code >= 0x10000 ? 2 : 1
  }
  return text.slice(index)
}

export class BoundedText {
  private chunks: Array<string> = []
  private bytes = 0
  private newlines = 0
  /** Older text was dropped since the last {@link consume}. */
  dropped = false

  constructor(private readonly maxBytes: number, private readonly maxLines?: number) {}

  append(text: string): void {
    if (text.length === 0) return
    this.chunks.push(text)
    this.bytes += Buffer.byteLength(text)
    this.newlines += countLines(text)
    while (this.bytes > this.maxBytes || (this.maxLines !== undefined && this.newlines >= this.maxLines)) {
      this.dropped = true
      const first = this.chunks[0]!
      const over = this.bytes - this.maxBytes
      // Only the dropped prefix is measured: the chunk may hold the whole text.
      let cut: number
      if (over > 0) cut = over >= Buffer.byteLength(first) ? first.length : first.length - dropBytes(first, over).length
      else cut = lineCut(first, this.newlines - this.maxLines! + 1)
      const prefix = first.slice(0, cut)
      this.bytes -= Buffer.byteLength(prefix)
      this.newlines -= countLines(prefix)
      if (cut === first.length) this.chunks.shift()
      else this.chunks[0] = first.slice(cut)
    }
  }

  /** Whether `text` can be appended without dropping older text. */
  fits(text: string): boolean {
    return this.bytes + Buffer.byteLength(text) <= this.maxBytes &&
      (this.maxLines === undefined || this.newlines + countLines(text) < this.maxLines)
  }

  get text(): string {
    if (this.chunks.length > 1) this.chunks = [this.chunks.join("")]
    return this.chunks[0] ?? ""
  }

  get isEmpty(): boolean {
    return this.chunks.length === 0
  }

  /** The text and whether anything was dropped, then empty. */
  consume(): { readonly text: string; readonly truncated: boolean } {
    const result = { text: this.text, truncated: this.dropped }
    this.chunks = []
    this.bytes = 0
    this.newlines = 0
    this.dropped = false
    return result
  }
}
