/**
 * The runner's dialect read from a whole stream, however it is chunked.
 */
import { describe, expect, it } from "vitest"
import { RunnerWatch } from "../../src/layers/internal/executor/RunnerWatch.js"
import { bwrapDialect } from "../../src/layers/internal/sandbox/bwrap.js"

const encoder = new TextEncoder()
const watching = (...chunks: ReadonlyArray<string>) => {
  const watch = new RunnerWatch(bwrapDialect)
  for (const chunk of chunks) watch.feed(encoder.encode(chunk))
  return watch
}

describe("RunnerWatch", () => {
  it("finds a denial split across chunks, in any case", () => {
    expect(watching("bash: f: Read-Only Fi", "le System\n").denied).toBe(true)
    expect(watching("bash: f: Permission denied\n").denied).toBe(false)
  })

  it("finds a denial inside a line longer than it buffers", () => {
    expect(watching("x".repeat(20_000), " read-only file", " system", "y".repeat(20_000)).denied).toBe(true)
  })

  it("takes a runner failure only from the start of a line, without its newline", () => {
    expect(watching("noise\nbwr", "ap: Can't mount proc\nmore\n").runnerFailure).toBe("bwrap: Can't mount proc")
    expect(watching("echo bwrap: not at the start\n").runnerFailure).toBeUndefined()
    expect(watching("x".repeat(10_000) + "bwrap: mid-line\n").runnerFailure).toBeUndefined()
    expect(watching("bwrap: no newline at the end").runnerFailure).toBe("bwrap: no newline at the end")
  })
})
