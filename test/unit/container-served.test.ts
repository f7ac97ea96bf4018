/**
 * The served exec's stream splitting: the command's bytes pass through at once and whole, the
 * wrapper's lines (after the call's marker) come out apart, wherever the chunks are cut.
 */
import { describe, expect, it } from "@effect/vitest"
import { MarkerScanner, randomServedKey, servable } from "../../src/layers/internal/container/served.js"

const key = randomServedKey()
const marker = Buffer.from(key.marker).toString("latin1")
const text = (bytes: Uint8Array) => Buffer.from(bytes).toString("latin1")

/** Every piece of `stream` cut into chunks of `size`: the data joined, and the lines. */
const scan = (stream: string, size: number) => {
  const scanner = new MarkerScanner(key.marker)
  let data = ""
  const lines: Array<string> = []
  for (let at = 0; at < stream.length; at += size) {
    for (const piece of scanner.push(Buffer.from(stream.slice(at, at + size), "latin1"))) {
      if ("line" in piece) lines.push(piece.line)
      else data += text(piece.data)
    }
  }
  const rest = scanner.end()
  if (rest !== undefined) data += text(rest)
  return { data, lines }
}

describe("a served exec's streams", () => {
  it("the wrapper's lines come apart from the command's bytes, however the chunks are cut", () => {
    const stream = `out\0put\0${"x".repeat(40)}${marker}exit 0 empty 1 2\nmore\n${marker}end 3 4\n`
    for (const size of [1, 2, 7, 33, stream.length]) {
      expect(scan(stream, size)).toEqual({ data: `out\0put\0${"x".repeat(40)}more\n`, lines: ["exit 0 empty 1 2", "end 3 4"] })
    }
  })

  it("another token, a marker cut short at the end and an endless line are the command's bytes", () => {
    const other = `\0${"0".repeat(32)} end 3 4\n`
    const cut = marker.slice(0, 10)
    expect(scan(`${other}${cut}`, 5)).toEqual({ data: `${other}${cut}`, lines: [] })
    const endless = `${marker}${"y".repeat(5000)}`
    expect(scan(`${endless}\n`, 100)).toEqual({ data: `${endless}\n`, lines: [] })
  })

  it("bytes that cannot start a marker are passed on at once", () => {
    const scanner = new MarkerScanner(key.marker)
    expect(scanner.push(Buffer.from("no marker here\n"))).toEqual([{ data: Buffer.from("no marker here\n") }])
    expect(scanner.end()).toBeUndefined()
  })

  it("calls whose variables bash would not export as given run in an exec of their own", () => {
    expect(servable({ PATH: "/bin", LANG: "C.UTF-8", __effect_bash_saved_BASH_ENV: "/x" })).toBe(true)
    for (const name of ["A-B", "1X", "UID", "RANDOM", "SHLVL", "BASH_XTRACEFD", "IFS"]) expect(servable({ [name]: "1" })).toBe(false)
  })
})
