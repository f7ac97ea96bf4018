import { describe, expect, it } from "@effect/vitest"
import { Effect, Schema } from "effect"
import { spawn } from "node:child_process"
import { closeSync, existsSync, mkdtempSync, openSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll } from "vitest"
import * as BashTool from "../../src/tool/BashTool.js"
import { cleanEnv, cliPath, eventually, runCli, startCli } from "../support/cli.js"
import { liveMembersOf } from "../support/processes.js"

const run = (args: ReadonlyArray<string>, env: Record<string, string> = {}) =>
  Effect.promise(() => runCli(["run", ...args], { env: cleanEnv(env) }))

const workdir = mkdtempSync(join(tmpdir(), "effect-bash-cli-run-"))
afterAll(() => rmSync(workdir, { recursive: true, force: true }))

// Each test runs its own CLI or host, in files of its own: they run side by side.
describe.concurrent("effect-bash run (real processes)", () => {
  it.live("prints exactly the model-facing text of an ok command and exits 0", () =>
    Effect.gen(function*() {
      const outcome = yield* run(["--", "echo", "hello"])
      expect(outcome).toMatchObject({ code: 0, stdout: "hello\n", stderr: "" })
    }))

  it.live("a failing command prints its exit marker and exits with its code", () =>
    Effect.gen(function*() {
      const outcome = yield* run(["--", "echo failing; echo oops >&2; exit 3"])
      expect(outcome).toMatchObject({ code: 3, stdout: "failing\n[stderr]\noops\n[exit code: 3]\n", stderr: "" })
    }))

  it.live("a timeout escalates TERM→KILL for a command ignoring TERM, and exits 124", () =>
    Effect.gen(function*() {
      const outcome = yield* run(["--timeout-ms", "1000", "--grace-ms", "200", "--", "trap '' TERM; sleep 30"])
      expect(outcome).toMatchObject({
        code: 124,
        stdout: "(no output)\n[timed out after 1000ms]\n[killed by signal: SIGKILL]\n"
      })
      // Far below the 30 s the command would take unkilled, with room for a slow node start.
      expect(outcome.elapsedMs).toBeLessThan(20_000)
    }))

  it.live("the timeout comes from EFFECT_BASH_TIMEOUT_MS when no flag is given", () =>
    Effect.gen(function*() {
      const outcome = yield* run(["--", "sleep", "5"], { EFFECT_BASH_TIMEOUT_MS: "200" })
      expect(outcome).toMatchObject({
        code: 124,
        stdout: "(no output)\n[timed out after 200ms]\n[killed by signal: SIGTERM]\n"
      })
    }))

  it.live("a command killed by a signal exits 128+n", () =>
    Effect.gen(function*() {
      const outcome = yield* run(["--", "kill -KILL $$"])
      expect(outcome).toMatchObject({ code: 137, stdout: "(no output)\n[killed by signal: SIGKILL]\n" })
    }))

  it.live("runs in --workdir", () =>
    Effect.gen(function*() {
      const outcome = yield* run(["--workdir", workdir, "--", "pwd"])
      expect(outcome).toMatchObject({ code: 0, stdout: `${workdir}\n` })
    }))

  it.live("--json prints the canonical value, which decodes with BashTool.Foreground, and the model's text", () =>
    Effect.gen(function*() {
      const outcome = yield* run(["--json", "--", "printf out; printf err >&2; exit 2"])
      expect(outcome.code).toBe(2)
      expect(outcome.stdout).toMatch(/}\n$/)
      const { text, ...printed } = JSON.parse(outcome.stdout)
      // Exactly what `run` without --json prints, and the model reads.
      expect(text).toBe("out\n[stderr]\nerr\n[exit code: 2]")
      expect((yield* run(["--", "printf out; printf err >&2; exit 2"])).stdout).toBe(`${text}\n`)
      const value = Schema.decodeUnknownSync(BashTool.Foreground, { onExcessProperty: "error" })(printed)
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
      // A bound for the CLI's start-up (node, Effect, the reaper), generous for a loaded machine.
      yield* Effect.promise(() => eventually(() => existsSync(pidFile) && readFileSync(pidFile, "utf8").endsWith("\n"), 20_000))
      expect(readFileSync(pidFile, "utf8")).toMatch(/^\d+\n$/)
      const shell = Number(readFileSync(pidFile, "utf8"))
      // The pid is written before `sleep 30 &` forks: wait for both members.
      expect(yield* Effect.promise(() => eventually(() => liveMembersOf([shell]).length === 2))).toBe(true)
      child.kill("SIGINT")
      const outcome = yield* Effect.promise(() => done)
      expect(outcome).toMatchObject({ code: 130, stdout: "" })
      expect(liveMembersOf([shell])).toEqual([])
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

  it.live("the text always ends with a newline, even when the command's output does not", () =>
    Effect.gen(function*() {
      expect(yield* run(["--", "printf done"])).toMatchObject({ code: 0, stdout: "done\n" })
      expect(yield* run(["--", "exit 4"])).toMatchObject({ code: 4, stdout: "(no output)\n[exit code: 4]\n" })
    }))

  it.live("says on stderr when a spill file it printed was removed as it exited", () =>
    Effect.gen(function*() {
      const outcome = yield* run(["--max-output-bytes", "10", "--", "seq 1 100"])
      const path = /full output: (\S+)\]/.exec(outcome.stdout)?.[1]
      expect(outcome.code).toBe(0)
      expect(path).toMatch(/stdout-.*\.log$/)
      expect(outcome.stderr).toBe(`effect-bash: spill file removed on exit: ${path} (--keep-spill-files keeps it)\n`)
      expect(existsSync(path!)).toBe(false)
    }))

  it.live("a stdout nobody reads any more (`| head`) ends the run with 141, quietly, after its cleanup", () =>
    Effect.gen(function*() {
      const spillDir = mkdtempSync(join(workdir, "spill-"))
      const cli = startCli(["run", "--spill-dir", spillDir, "--max-output-bytes", "10", "--", "seq 1 100"], { env: cleanEnv() })
      // The reader is gone before the CLI has started, so its one write fails with EPIPE.
      cli.child.stdout!.destroy()
      const outcome = yield* Effect.promise(() => cli.done)
      expect(outcome).toMatchObject({ code: 141, signal: null, stderr: "" })
      expect(readdirSync(spillDir)).toEqual([])
    }))

  it.live("a stdout that takes no more for another reason (a full disk) is an error: exit 1, said on stderr", () =>
    Effect.gen(function*() {
      const full = openSync("/dev/full", "w")
      const cli = spawn(process.execPath, [cliPath, "run", "--", "echo hi"], { env: cleanEnv(), stdio: ["ignore", full, "pipe"] })
      closeSync(full)
      let stderr = ""
      cli.stderr!.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk))
      const code = yield* Effect.promise(() => new Promise<number | null>((resolve) => cli.on("close", resolve)))
      expect({ code, stderr }).toEqual({ code: 1, stderr: "effect-bash: cannot write to stdout: ENOSPC: no space left on device, write\n" })
    }))

  it.live("--keep-spill-files keeps the spill file and says nothing", () =>
    Effect.gen(function*() {
      const outcome = yield* run(["--keep-spill-files", "--spill-dir", workdir, "--max-output-bytes", "10", "--", "seq 1 100"])
      const path = /full output: (\S+)\]/.exec(outcome.stdout)?.[1]
      expect(outcome).toMatchObject({ code: 0, stderr: "" })
      expect(readFileSync(path!, "utf8")).toBe(Array.from({ length: 100 }, (_, i) => `${i + 1}\n`).join(""))
    }))

  it.live("--help shows `effect-bash run`, a real description for every option, and no colour in a pipe", () =>
    Effect.gen(function*() {
      const help = yield* run(["--help"])
      expect(help.code).toBe(0)
      expect(help.stdout).toContain("\neffect-bash run [--workdir DIR]")
      // Optional flags, repeatable ones included, are bracketed.
      expect(help.stdout).toContain(" [--env-allow NAME...] [--env-deny REGEX...] ")
      // NAME... is one value per flag, as @effect/cli parses a repeated option; the help says how.
      expect(help.stdout).toContain("repeat the flag for more: --env-allow A --env-allow B")
      expect(help.stdout).toContain("repeat the flag for more: --env-deny A --env-deny B")
      expect(help.stdout).not.toMatch(/^\$ /m)
      expect(help.stdout).not.toContain("A user-defined piece of text")
      expect(help.stdout).not.toContain("A true or false value")
      expect(help.stdout).not.toContain("\x1b")
      // Every option heading is followed by its own description.
      for (const flag of ["--workdir DIR", "--timeout-ms N", "--keep-spill-files", "--json", "--description TEXT"]) {
        expect(help.stdout).toMatch(new RegExp(`\\n${flag}\\n\\n  [A-Z][^\\n]+\\n`))
      }
      const usage = yield* run(["--json"], { NO_COLOR: "1" })
      expect(usage.code).toBe(2)
      expect(usage.stderr).not.toContain("\x1b")
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

  it.live("started in a working directory that was removed: an absolute --workdir runs, else exit 2 saying so", () =>
    Effect.gen(function*() {
      const inRemoved = (args: string, env: Record<string, string> = {}) =>
        Effect.promise(() =>
          new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
            const gone = mkdtempSync(join(workdir, "gone-"))
            const cli = spawn("bash", ["-c", `cd '${gone}' && rmdir '${gone}' && exec '${process.execPath}' '${cliPath}' ${args}`], {
              env: cleanEnv(env),
              stdio: ["ignore", "pipe", "pipe"]
            })
            let stdout = ""
            let stderr = ""
            cli.stdout.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk))
            cli.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk))
            cli.on("close", (code) => resolve({ code, stdout, stderr }))
          })
        )
      expect(yield* inRemoved(`run --workdir '${workdir}' -- pwd`)).toEqual({ code: 0, stdout: `${workdir}\n`, stderr: "" })
      expect(yield* inRemoved("run -- pwd")).toEqual({
        code: 2,
        stdout: "",
        stderr: "effect-bash: working directory: it no longer exists\n"
      })
      expect(yield* inRemoved("run --workdir sub -- pwd")).toEqual({
        code: 2,
        stdout: "",
        stderr: `effect-bash: --workdir: "sub" is relative, and the working directory no longer exists\n`
      })
      expect(yield* inRemoved(`run --workdir '${workdir}' -- pwd`, { DSH_HOME: "home" })).toEqual({
        code: 1,
        stdout: "",
        stderr: `effect-bash: DSH_HOME: "home" is relative, and the working directory no longer exists\n`
      })
    }))

  it.scopedLive("on a terminal the output appears while the command runs, then the markers", () =>
    Effect.gen(function*() {
      const go = join(workdir, "tty-go")
      const command = `echo one; while [ ! -e '${go}' ]; do sleep 0.01; done; echo two; exit 3`
      // A pseudo-terminal as the CLI's stdout (python3's `pty`, read to its end however fast the CLI ends).
      const onPty = join(import.meta.dirname, "..", "support", "fixtures", "onpty.py")
      const cli = yield* Effect.acquireRelease(
        Effect.sync(() =>
          spawn("python3", [onPty, "", `'${process.execPath}' '${cliPath}' run -- "${command}"`], {
            env: cleanEnv(),
            stdio: ["ignore", "pipe", "pipe"]
          })
        ),
        // Whatever the assertions did, the command is let go and the CLI does not outlive the test.
        (cli) =>
          Effect.sync(() => {
            writeFileSync(go, "")
            if (cli.exitCode === null) cli.kill("SIGKILL")
          })
      )
      let screen = ""
      cli.stdout.setEncoding("utf8").on("data", (chunk: string) => (screen += chunk))
      const closed = new Promise<number | null>((resolve) => cli.on("close", resolve))
      // The command cannot end before `go` exists: "one" on the screen was shown live.
      yield* Effect.promise(() => eventually(() => screen.includes("one")))
      expect(screen).toContain("one")
      expect(screen).not.toContain("two")
      writeFileSync(go, "")
      expect(yield* Effect.promise(() => closed)).toBe(3)
      expect(screen.replaceAll("\r\n", "\n")).toBe("one\ntwo\n[exit code: 3]\n")
    }))
})
