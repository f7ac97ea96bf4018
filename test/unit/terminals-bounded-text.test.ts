/**
 * A terminal's bounded text (scrollback, send results): the newest bytes and lines are kept exactly,
 * whatever the chunks, and a chunk of many short lines is cut in one pass.
 */
import { describe, expect, it } from "@effect/vitest"
import { BoundedText } from "../../src/layers/internal/terminal/boundedText.js"

/** The newest text within `maxBytes` UTF-8 bytes and fewer than `maxLines` newlines, the slow way. */
const reference = (all: string, maxBytes: number, maxLines: number): string => {
  let text = all
  while (Buffer.byteLength(text) > maxBytes) text = text.slice(text.codePointAt(0)! >= 0x10000 ? 2 : 1)
  while ((text.match(/\n/g) ?? []).length >= maxLines) text = text.slice(text.indexOf("\n") + 1)
  return text
}

describe("BoundedText", () => {
  it("keeps exactly the newest bytes and lines, chunk by chunk", () => {
    const pieces = ["ab\ncd", "\n", "é€\n𝄞x", "yy\n\n\nz", "no newline here", "\nq\nr\ns\n", "tail"]
    for (const [maxBytes, maxLines] of [[1_000, 3], [12, 100], [9, 2], [5, 1]] as const) {
      const bounded = new BoundedText(maxBytes, maxLines)
      let all = ""
      for (const piece of pieces) {
        bounded.append(piece)
        all += piece
        expect(bounded.text, `${maxBytes}/${maxLines} after ${JSON.stringify(piece)}`).toBe(reference(all, maxBytes, maxLines))
      }
    }
  })

  it("drops the oldest lines of a chunk of thousands", () => {
    const bounded = new BoundedText(1024 * 1024, 10)
    const chunk = "y\r\n".repeat(20_000)
    for (let i = 0; i < 3; i++) bounded.append(chunk)
    expect(bounded.text).toBe("y\r\n".repeat(9))
    expect(bounded.dropped).toBe(true)
  })
})
