/**
 * `run`'s command line before @effect/cli reads it: unknown flags are errors, flags end at the first
 * command word.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { checkArgvBytes, checkWizard } from "../../src/cli/commandLine.js"
import { checkRunArgv } from "../../src/cli/runArgv.js"
import { runFlagNames } from "../../src/cli/runCommand.js"

const check = (...args: Array<string>) => checkRunArgv(["node", "main.js", ...args], runFlagNames)
const checked = (...args: Array<string>) => Effect.map(check(...args), (argv) => argv.slice(2))

describe("run's command line", () => {
  it.effect("inserts -- before the first command word, after flags and their values", () =>
    Effect.gen(function*() {
      expect(yield* checked("run", "echo", "hi", "--json")).toEqual(["run", "--", "echo", "hi", "--json"])
      expect(yield* checked("run", "--json", "--grace-ms", "500", "ls", "-l")).toEqual(
        ["run", "--json", "--grace-ms", "500", "--", "ls", "-l"]
      )
      expect(yield* checked("run", "--workdir=/tmp", "--keep-spill-files", "pwd")).toEqual(
        ["run", "--workdir=/tmp", "--keep-spill-files", "--", "pwd"]
      )
      expect(yield* checked("--log-level", "debug", "run", "-h")).toEqual(["--log-level", "debug", "run", "-h"])
    }))

  it.effect("--contain takes no value: the word after it is the command", () =>
    Effect.gen(function*() {
      expect(yield* checked("run", "--contain", "pwd")).toEqual(["run", "--contain", "--", "pwd"])
      expect(yield* checked("run", "--contain", "--", "pwd")).toEqual(["run", "--contain", "--", "pwd"])
    }))

  it.effect("leaves an explicit -- and everything after it alone", () =>
    Effect.gen(function*() {
      expect(yield* checked("run", "--json", "--", "--version", "--json")).toEqual(["run", "--json", "--", "--version", "--json"])
    }))

  it.effect("other subcommands are not touched", () =>
    Effect.gen(function*() {
      expect(yield* checked("mcp", "--workdir", "/tmp", "--bogus")).toEqual(["mcp", "--workdir", "/tmp", "--bogus"])
    }))

  it.effect("an unknown flag or a flag without its value is an error naming it", () =>
    Effect.gen(function*() {
      expect((yield* Effect.flip(check("run", "--timeout", "5000", "--", "echo hi"))).message).toBe(
        "--timeout: unknown flag (did you mean --timeout-ms?); a command starting with - goes after --"
      )
      expect((yield* Effect.flip(check("run", "--jsn", "ls"))).message).toBe(
        "--jsn: unknown flag (did you mean --json?); a command starting with - goes after --"
      )
      expect((yield* Effect.flip(check("run", "--grace-ms"))).message).toBe("--grace-ms: expected a value")
    }))

  it.effect("--wizard is refused when stdin is no terminal, and left alone on one or among a command's words", () =>
    Effect.gen(function*() {
      const argv = ["node", "main.js", "run", "--wizard"]
      expect((yield* Effect.flip(checkWizard(argv, false))).message).toBe(
        "--wizard: asks its questions on a terminal, and stdin is not one"
      )
      expect(yield* checkWizard(argv, true)).toEqual(argv)
      const words = ["node", "main.js", "run", "--", "echo", "--wizard"]
      expect(yield* checkWizard(words, false)).toEqual(words)
    }))

  it.effect("a command line with a word that is not UTF-8 is refused: Node would have replaced its bytes", () =>
    Effect.gen(function*() {
      const argv = ["node", "main.js", "run", "--", "cat", "caf\uFFFD.txt"]
      const raw = (...words: Array<Buffer>) => Buffer.concat(words.flatMap((word) => [word, Buffer.of(0)]))
      const latin1 = raw(...["node", "main.js", "run", "--", "cat"].map((word) => Buffer.from(word)), Buffer.from("caf\xe9.txt", "latin1"))
      expect((yield* Effect.flip(checkArgvBytes(argv, latin1))).message).toBe(
        `"caf\uFFFD.txt" is not UTF-8 text: effect-bash reads its arguments as text, and would pass on other bytes`
      )
      const text = ["node", "main.js", "run", "--", "echo", "café"]
      expect(yield* checkArgvBytes(text, raw(...text.map((word) => Buffer.from(word))))).toEqual(text)
      expect(yield* checkArgvBytes(argv, undefined)).toEqual(argv)
      // Node's own words (its path, the script's) are not the arguments.
      const installed = raw(Buffer.from("node"), Buffer.from("/opt/caf\xe9/main.js", "latin1"), ...text.slice(2).map((word) => Buffer.from(word)))
      expect(yield* checkArgvBytes(text, installed)).toEqual(text)
    }))
})
