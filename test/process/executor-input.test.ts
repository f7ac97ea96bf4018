/**
 * Hostile or unlucky input through the real local executor: commands bash could mistake for its
 * own options, NUL bytes, commands longer than the kernel's per-argument limit, over-long workdirs
 * and huge values echoed in error messages.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import * as LocalBashExecutor from "../../src/layers/LocalBashExecutor.js"
import { BashExecutor } from "../../src/services/BashExecutor.js"

const run = (request: BashExecutor.Request) =>
  Effect.gen(function*() {
    const bash = yield* BashExecutor
    return yield* bash.run(yield* bash.resolve(request))
  })

const resolveError = (request: BashExecutor.Request) =>
  Effect.flip(Effect.flatMap(BashExecutor, (bash) => bash.resolve(request)))

describe("commands bash could read as options", () => {
  it.live("a command starting with - is a command, not bash's options", () =>
    Effect.gen(function*() {
      const version = yield* run({ command: "--version" })
      expect(version).toMatchObject({ exitCode: 127, stdout: { text: "" } })
      expect(version.stderr.text).toContain("--version: command not found")
      const shopt = yield* run({ command: "-O extglob" })
      expect(shopt).toMatchObject({ exitCode: 127, stdout: { text: "" } })
      expect(shopt.stderr.text).toContain("-O: command not found")
    }).pipe(Effect.provide(LocalBashExecutor.layer())))
})

describe("NUL bytes and over-long workdirs are request errors naming the field", () => {
  it.effect("resolve names command or workdir", () =>
    Effect.gen(function*() {
      expect(yield* resolveError({ command: "echo a\0b" })).toMatchObject({
        _tag: "BashRequestError",
        field: "command",
        message: "invalid command: expected a string without NUL bytes"
      })
      expect(yield* resolveError({ command: "true", workdir: "/tmp\0/x" })).toMatchObject({
        _tag: "BashRequestError",
        field: "workdir",
        message: "invalid workdir: expected a path without NUL bytes, got \"/tmp\\u0000/x\""
      })
      const long = `/tmp/${"d".repeat(5000)}`
      const tooLong = yield* resolveError({ command: "true", workdir: long })
      expect(tooLong).toMatchObject({ _tag: "BashRequestError", field: "workdir" })
      expect(tooLong.message).toBe(
        `invalid workdir: longer than the OS allows (4095 bytes, 255 per name), got ${JSON.stringify(long).slice(0, 200)}…`
      )
      const longName = yield* resolveError({ command: "true", workdir: `/tmp/${"n".repeat(256)}` })
      expect(longName.message).toMatch(/^invalid workdir: longer than the OS allows/)
    }).pipe(Effect.provide(LocalBashExecutor.layer())))

  it.effect("an echoed value is capped at 200 characters plus …", () =>
    Effect.gen(function*() {
      const error = yield* resolveError({ command: "true", timeoutMs: "9".repeat(1_000_000) as never })
      expect(error.message).toBe(`invalid timeoutMs: expected a positive finite number, got "${"9".repeat(199)}…`)
    }).pipe(Effect.provide(LocalBashExecutor.layer())))
})

describe("commands of any length", () => {
  it.live("a 1 MiB heredoc runs (past the kernel's 128 KiB per-argument limit)", () =>
    Effect.gen(function*() {
      const line = `${"x".repeat(63)}\n`
      const body = line.repeat(16 * 1024) // 1 MiB
      const command = `echo "$0"; cat <<'EOF' | wc -c\n${body}EOF\necho done`
      const result = yield* run({ command })
      expect(result).toMatchObject({ exitCode: 0, stderr: { text: "" } })
      expect(result.stdout.text).toBe(`bash\n${body.length}\ndone\n`)
    }).pipe(Effect.provide(LocalBashExecutor.layer())))

  it.live("a long command keeps stdin, exit codes, traps and $0, and its children never see the script's fd", () =>
    Effect.gen(function*() {
      const padding = `: ${"p".repeat(200 * 1024)}\n`
      const command = `${padding}trap 'echo trapped' EXIT\n` +
        `echo "$0 $# $(cat)"\n` +
        `bash -c '[ -e /proc/$$/fd/3 ] && echo child-has-fd3 || echo child-clean'\n` +
        `[ -e /proc/$$/fd/3 ] && echo shell-has-fd3 || echo shell-clean\n` +
        `declare -p __effect_bash_script 2>/dev/null || echo no-leftover-variable\n` +
        `exit 7`
      const result = yield* run({ command, stdin: "fed" })
      expect(result).toMatchObject({ exitCode: 7, stderr: { text: "" } })
      expect(result.stdout.text).toBe("bash 0 fed\nchild-clean\nshell-clean\nno-leftover-variable\ntrapped\n")
    }).pipe(Effect.provide(LocalBashExecutor.layer())))

  it.live("a short command still runs as bash's -c argument ($0 is bash, no extra fd)", () =>
    Effect.gen(function*() {
      const result = yield* run({ command: "echo \"$0 $#\"; [ -e /proc/$$/fd/3 ] && echo fd3 || echo no-fd3" })
      expect(result.stdout.text).toBe("bash 0\nno-fd3\n")
    }).pipe(Effect.provide(LocalBashExecutor.layer())))
})
