import { describe, expect, it } from "@effect/vitest"
import { Effect, Schema } from "effect"
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll } from "vitest"
import { RunValueJson } from "../src/cli/runValue.js"
import { cleanEnv, eventually, membersOfGroups, runCli, startCli } from "./cli-support.js"

const run = (args: ReadonlyArray<string>, env: Record<string, string> = {}) =>
  Effect.promise(() => runCli(["run", ...args], { env: cleanEnv(env) }))

const workdir = mkdtempSync(join(tmpdir(), "effect-bash-cli-run-"))
afterAll(() => rmSync(workdir, { recursive: true, force: true }))

describe("effect-bash run (real processes)", () => {
  it.live("prints exactly the model-facing text of an ok command and exits 0", () =>
    Effect.gen(function*() {
      const outcome = yield* run(["--", "echo", "hello"])
      expect(outcome).toMatchObject({ code: 0, stdout: "hello\n", stderr: "" })
    }))

  it.live("a failing command prints its exit marker and exits with its code", () =>
    Effect.gen(function*() {
      const outcome = yield* run(["--", "echo failing; echo oops >&2; exit 3"])
      expect(outcome).toMatchObject({ code: 3, stdout: "failing\n[stderr]\noops\n[exit code: 3]", stderr: "" })
    }))

  it.live("a timeout escalates TERM→KILL for a command ignoring TERM, and exits 124", () =>
    Effect.gen(function*() {
      const outcome = yield* run(["--timeout-ms", "300", "--grace-ms", "200", "--", "trap '' TERM; sleep 30"])
      expect(outcome).toMatchObject({
        code: 124,
        stdout: "(no output)\n[timed out after 300ms]\n[killed by signal: SIGKILL]"
      })
      // Far below the 30 s the command would take unkilled, with room for a slow node start.
      expect(outcome.elapsedMs).toBeLessThan(10_000)
    }))

  it.live("the timeout comes from EFFECT_BASH_TIMEOUT_MS when no flag is given", () =>
    Effect.gen(function*() {
      const outcome = yield* run(["--", "sleep", "5"], { EFFECT_BASH_TIMEOUT_MS: "200" })
      expect(outcome).toMatchObject({
        code: 124,
        stdout: "(no output)\n[timed out after 200ms]\n[killed by signal: SIGTERM]"
      })
    }))

  it.live("a command killed by a signal exits 128+n", () =>
    Effect.gen(function*() {
      const outcome = yield* run(["--", "kill -KILL $$"])
      expect(outcome).toMatchObject({ code: 137, stdout: "(no output)\n[killed by signal: SIGKILL]" })
    }))

  it.live("runs in --workdir", () =>
    Effect.gen(function*() {
      const outcome = yield* run(["--workdir", workdir, "--", "pwd"])
      expect(outcome).toMatchObject({ code: 0, stdout: `${workdir}\n` })
    }))

  it.live("--json prints the canonical value, which decodes with RunValueJson", () =>
    Effect.gen(function*() {
      const outcome = yield* run(["--json", "--", "printf out; printf err >&2; exit 2"])
      expect(outcome.code).toBe(2)
      expect(outcome.stdout.endsWith("}\n")).toBe(true)
      const value = Schema.decodeUnknownSync(RunValueJson, { onExcessProperty: "error" })(JSON.parse(outcome.stdout))
      expect(value).toEqual({
        kind: "foreground",
        exitCode: 2,
        signal: null,
        timedOut: false,
        aborted: false,
        timeoutMs: 120000,
        stdout: { text: "out", truncated: false },
        stderr: { text: "err", truncated: false }
      })
    }))

  it.live("an error result prints `Error: <message>` on stderr and exits 125", () =>
    Effect.gen(function*() {
      const outcome = yield* run(["--", ""])
      expect(outcome).toMatchObject({
        code: 125,
        stdout: "",
        stderr: "Error: invalid command: expected a non-empty string\n"
      })
    }))

  it.live("Ctrl-C interrupts the run, kills the command's process group and exits 130", () =>
    Effect.gen(function*() {
      const pidFile = join(workdir, "sigint.pid")
      const { child, done } = startCli(["run", "--workdir", workdir, "--", "echo $$ > sigint.pid; sleep 30 & wait"])
      expect(yield* Effect.promise(() => eventually(() => existsSync(pidFile) && readFileSync(pidFile, "utf8").endsWith("\n")))).toBe(true)
      const shell = Number(readFileSync(pidFile, "utf8"))
      // The pid is written before `sleep 30 &` forks: wait for both members.
      expect(yield* Effect.promise(() => eventually(() => membersOfGroups([shell]).length === 2))).toBe(true)
      child.kill("SIGINT")
      const outcome = yield* Effect.promise(() => done)
      expect(outcome).toMatchObject({ code: 130, stdout: "" })
      expect(membersOfGroups([shell])).toEqual([])
    }))

  it.live("a command starting with - runs as a command, not as bash's options", () =>
    Effect.gen(function*() {
      const outcome = yield* run(["--", "--version"])
      expect(outcome.code).toBe(127)
      expect(outcome.stdout).toContain("--version: command not found")
      expect(outcome.stdout).not.toContain("GNU bash")
    }))

  it.live("an unknown or misspelled flag is an error (exit 2) and nothing runs", () =>
    Effect.gen(function*() {
      const marker = join(workdir, "ran-anyway")
      const outcome = yield* run(["--workdir", workdir, "--timeout", "5000", "--", `touch ${marker}`])
      expect(outcome).toMatchObject({
        code: 2,
        stdout: "",
        stderr: "effect-bash: --timeout: unknown flag (did you mean --timeout-ms?); a command starting with - goes after --\n"
      })
      expect(existsSync(marker)).toBe(false)
      const missingValue = yield* run(["--workdir"])
      expect(missingValue).toMatchObject({ code: 2, stdout: "", stderr: "effect-bash: --workdir: expected a value\n" })
    }))

  it.live("flags end at the first command word: later words belong to the command", () =>
    Effect.gen(function*() {
      const outcome = yield* run(["--workdir", workdir, "echo", "hi", "--json", "--workdir", "/"])
      expect(outcome).toMatchObject({ code: 0, stdout: "hi --json --workdir /\n", stderr: "" })
    }))

  it.live("an invalid setting names its flag or variable and exits 2", () =>
    Effect.gen(function*() {
      const flag = yield* run(["--grace-ms", "soon", "--", "true"])
      expect(flag).toMatchObject({
        code: 2,
        stdout: "",
        stderr: "effect-bash: --grace-ms: expected a positive finite number, got \"soon\"\n"
      })
      const variable = yield* run(["--", "true"], { EFFECT_BASH_MAX_OUTPUT_BYTES: "-1" })
      expect(variable).toMatchObject({
        code: 2,
        stderr: "effect-bash: EFFECT_BASH_MAX_OUTPUT_BYTES: expected a positive finite number, got -1\n"
      })
    }))
})
