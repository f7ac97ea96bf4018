/**
 * The local executor's environment, configuration errors and request validation, over real processes.
 */
import { describe, expect, it } from "@effect/vitest"
import { Config, Effect, Layer } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import * as LocalBashExecutor from "../../src/layers/LocalBashExecutor.js"
import { BashExecutor } from "../../src/services/BashExecutor.js"
import { withHostEnv } from "../support/hostEnv.js"
import { envConfigProvider } from "../support/configEnv.js"

const resolve = (request: BashExecutor.Request) => Effect.flatMap(BashExecutor, (bash) => bash.resolve(request))

describe("LocalBashExecutor environment and validation", () => {
  it.live("the child sees the built environment and process.env is untouched", () =>
    Effect.gen(function*() {
      const before = { ...process.env }
      const bash = yield* BashExecutor
      const result = yield* bash.run(yield* bash.resolve({
        command: "echo \"$NO_COLOR $TERM $GIT_TERMINAL_PROMPT $MINE $DSH_SESSION_ID\"",
        env: { MINE: "mine" },
        dshEnv: { DSH_SESSION_ID: "s9" }
      }))
      expect(result.stdout.text).toBe("1 dumb 0 mine s9\n")
      expect(process.env).toEqual(before)
    }).pipe(Effect.provide(LocalBashExecutor.layer())))

  it.live("inherited SHELLOPTS and exported functions do not reach the command", () =>
    Effect.gen(function*() {
      const bash = yield* BashExecutor
      const result = yield* bash.run(yield* bash.resolve({ command: "ls -d /; false; echo \"after $-\"" }))
      expect(result).toMatchObject({ exitCode: 0, stdout: { text: "/\nafter hBc\n" }, stderr: { text: "" } })
    }).pipe(
      Effect.provide(LocalBashExecutor.layer()),
      withHostEnv({
        SHELLOPTS: "xtrace:errexit",
        BASHOPTS: "failglob",
        "BASH_FUNC_ls%%": "() {  echo hijacked\n}",
        "BASH_FUNC_echo%%": "() {  builtin echo hijacked\n}"
      })
    ))

  it.live("no rc file is read, even when stdin is a socket (which makes bash source ~/.bashrc)", () => {
    const home = fs.mkdtempSync(path.join(os.tmpdir(), "effect-bash-home-"))
    return Effect.gen(function*() {
      fs.writeFileSync(path.join(home, ".bashrc"), "echo bashrc-was-read\n")
      fs.writeFileSync(path.join(home, ".bash_profile"), "echo profile-was-read\n")
      const bash = yield* BashExecutor
      // SHLVL 0 is what a host started outside any shell passes; bash only sources then.
      const env = { HOME: home, SHLVL: "0" }
      const withStdin = yield* bash.run(yield* bash.resolve({ command: "cat", stdin: "input\n", env }))
      const withoutStdin = yield* bash.run(yield* bash.resolve({ command: "echo plain", env }))
      expect(withStdin.stdout.text).toBe("input\n")
      expect(withoutStdin.stdout.text).toBe("plain\n")
    }).pipe(
      Effect.provide(LocalBashExecutor.layer()),
      Effect.ensuring(Effect.sync(() => fs.rmSync(home, { recursive: true, force: true })))
    )
  })

  it.effect("env may not set DSH_* and dshEnv may set only DSH_*", () =>
    Effect.gen(function*() {
      const reserved = yield* Effect.flip(resolve({ command: "true", env: { DSH_HOME: "/x" } }))
      expect(reserved).toMatchObject({ field: "env" })
      expect(reserved.message).toBe("ordinary bash env cannot set reserved variable \"DSH_HOME\"; use dshEnv")
      const ordinary = yield* Effect.flip(resolve({ command: "true", dshEnv: { PATH: "/x" } }))
      expect(ordinary).toMatchObject({ field: "dshEnv" })
      expect(ordinary.message).toBe("managed bash env cannot set ordinary variable \"PATH\"; use env")
    }).pipe(Effect.provide(LocalBashExecutor.layer())))

  it.effect("resolve fills defaults, caps the timeout and names a bad field", () =>
    Effect.gen(function*() {
      const spec = yield* resolve({ command: "true", timeoutMs: 10_000_000 })
      expect(spec).toEqual({ command: "true", workdir: "/tmp", timeoutMs: 600_000, stdoutMaxBytes: 64_000 })
      expect(yield* resolve({ command: "true", workdir: "/w", timeoutMs: 5, stdoutMaxBytes: 7 })).toEqual({
        command: "true",
        workdir: "/w",
        timeoutMs: 5,
        stdoutMaxBytes: 7
      })
      for (const bad of [0, -1, Number.NaN, Number.POSITIVE_INFINITY]) {
        const error = yield* Effect.flip(resolve({ command: "true", timeoutMs: bad }))
        expect(error).toMatchObject({ _tag: "BashRequestError", field: "timeoutMs" })
        expect(error.message).toBe(`invalid timeoutMs: expected a positive finite number, got ${bad}`)
      }
      const stdoutError = yield* Effect.flip(resolve({ command: "true", stdoutMaxBytes: 0 }))
      expect(stdoutError.message).toBe("invalid stdoutMaxBytes: expected a positive finite number, got 0")
    }).pipe(Effect.provide(LocalBashExecutor.layer({ cwd: "/tmp" }))))

  it.effect("settings come from EFFECT_BASH_* variables through Effect Config", () =>
    Effect.gen(function*() {
      const spec = yield* resolve({ command: "true" })
      expect(spec).toMatchObject({ timeoutMs: 4_321, stdoutMaxBytes: 99, workdir: "/srv" })
      const error = yield* Effect.flip(
        Layer.build(LocalBashExecutor.layerConfig()).pipe(
          Effect.scoped,
          Effect.withConfigProvider(envConfigProvider({ EFFECT_BASH_GRACE_MS: "-1" }))
        )
      )
      expect(error.message).toBe("bash-local: graceMs must be a positive finite number")
    }).pipe(
      Effect.provide(LocalBashExecutor.layerConfig()),
      Effect.withConfigProvider(envConfigProvider({
        EFFECT_BASH_TIMEOUT_MS: "4321",
        EFFECT_BASH_MAX_OUTPUT_BYTES: "99",
        EFFECT_BASH_CWD: "/srv"
      }))
    ))

  it.effect("layerConfig reads the variables a user names", () =>
    Effect.gen(function*() {
      expect(yield* resolve({ command: "true" })).toMatchObject({ workdir: "/srv", timeoutMs: 4_321 })
    }).pipe(
      Effect.provide(LocalBashExecutor.layerConfig({
        cwd: Config.string("APP_SHELL_DIR"),
        timeoutMs: Config.number("APP_SHELL_TIMEOUT")
      })),
      Effect.withConfigProvider(envConfigProvider({ APP_SHELL_DIR: "/srv", APP_SHELL_TIMEOUT: "4321", EFFECT_BASH_TIMEOUT_MS: "1" }))
    ))
})
