/**
 * The child's environment, configuration errors and request validation.
 */
import { describe, expect, it } from "@effect/vitest"
import { ConfigProvider, Effect, Layer } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import * as LocalBashExecutor from "../src/layers/LocalBashExecutor.js"
import { buildEnv, makeEnvBuilder } from "../src/layers/internal/executor/environment.js"
import { BashExecutor } from "../src/services/BashExecutor.js"

const inherited = {
  PATH: "/usr/bin",
  HOME: "/home/me",
  OPENAI_API_KEY: "sk-1",
  GITHUB_TOKEN: "t",
  AWS_SECRET_ACCESS_KEY: "s",
  DB_PASSWORD: "p",
  MYSQL_PASSWD: "p",
  GOOGLE_APPLICATION_CREDENTIALS: "/c.json",
  KEYBOARD_LAYOUT: "us",
  INTERNAL_URL: "http://x",
  DSH_SESSION_ID: "stale",
  DSH_HOME: "/stale",
  BASH_ENV: "/home/me/.bash_env",
  ENV: "/home/me/.shrc",
  TERM: "xterm-256color"
}

const noScrubExtras = { allow: [], deny: [] }

describe("buildEnv", () => {
  it("drops credential-shaped names and every inherited DSH_*", () => {
    const env = buildEnv(inherited, noScrubExtras, undefined, undefined)
    for (const name of [
      "OPENAI_API_KEY",
      "GITHUB_TOKEN",
      "AWS_SECRET_ACCESS_KEY",
      "DB_PASSWORD",
      "MYSQL_PASSWD",
      "GOOGLE_APPLICATION_CREDENTIALS",
      "KEYBOARD_LAYOUT",
      "DSH_SESSION_ID",
      "DSH_HOME",
      "BASH_ENV",
      "ENV"
    ]) expect(env).not.toHaveProperty(name)
    expect(env).toMatchObject({ PATH: "/usr/bin", HOME: "/home/me", INTERNAL_URL: "http://x" })
  })

  it("sets display and non-interactive variables over inherited ones", () => {
    const env = buildEnv(inherited, noScrubExtras, undefined, undefined)
    expect(env).toMatchObject({
      NO_COLOR: "1",
      TERM: "dumb",
      PAGER: "cat",
      GIT_PAGER: "cat",
      GIT_TERMINAL_PROMPT: "0",
      DEBIAN_FRONTEND: "noninteractive"
    })
  })

  it("keeps allow-listed names and drops extra deny patterns", () => {
    const env = buildEnv(inherited, { allow: ["KEYBOARD_LAYOUT"], deny: [/^INTERNAL_/i] }, undefined, undefined)
    expect(env.KEYBOARD_LAYOUT).toBe("us")
    expect(env).not.toHaveProperty("INTERNAL_URL")
    expect(env).not.toHaveProperty("OPENAI_API_KEY")
  })

  it("an explicit env entry wins even on a credential-shaped name, and dshEnv comes last", () => {
    const env = buildEnv(inherited, noScrubExtras, { OPENAI_API_KEY: "mine", TERM: "vt100" }, { DSH_SESSION_ID: "s2" })
    expect(env).toMatchObject({ OPENAI_API_KEY: "mine", TERM: "vt100", DSH_SESSION_ID: "s2" })
  })

  it("drops inherited shell state (options and exported functions), even when allow-listed", () => {
    const shellState = {
      SHELLOPTS: "xtrace:errexit",
      BASHOPTS: "extglob:nullglob",
      "BASH_FUNC_ls%%": "() {  echo hijacked\n}",
      "BASH_FUNC_module%%": "() {  eval $(/usr/bin/modulecmd bash $*)\n}",
      BASH_VERSION_PIN: "5"
    }
    const env = buildEnv(shellState, { allow: Object.keys(shellState), deny: [] }, undefined, undefined)
    for (const name of ["SHELLOPTS", "BASHOPTS", "BASH_FUNC_ls%%", "BASH_FUNC_module%%"]) {
      expect(env).not.toHaveProperty(name)
    }
    expect(env.BASH_VERSION_PIN).toBe("5")
  })

  const secrets = {
    DATABASE_URL: "postgres://app:secret@db/x",
    REDIS_URL: "redis://:hunter2@cache:6379/0",
    MONGODB_URI: "mongodb+srv://admin:pw@cluster0.example.net/?retryWrites=true",
    HTTPS_PROXY: "http://user:pass@proxy.corp:3128",
    https_proxy: "http://user:pass@proxy.corp:3128",
    PIP_EXTRA_INDEX_URL: "https://pypi.org/simple https://deploy:tok3n@pkgs.corp/simple",
    MYSQL_PWD: "p",
    SMTP_PASS: "p",
    GITLAB_PAT: "glpat-1",
    CI_JOB_JWT: "eyJ",
    SENTRY_DSN: "https://abc@o1.ingest.sentry.io/1",
    DOCKER_AUTH_CONFIG: "{}",
    NPM_AUTH: "x",
    STRIPE_SK: "sk_live_1",
    SSH_AUTH_SOCK: "/tmp/ssh-agent.sock"
  }

  it("drops URLs with a password and credential-shaped names (_PWD, _PASS, _PAT, _JWT, _DSN, AUTH)", () => {
    const env = buildEnv(secrets, noScrubExtras, undefined, undefined)
    // STRIPE_SK matches no rule: a secret in an innocently named variable needs envDeny (README).
    expect(Object.keys(env).filter((name) => name in secrets)).toEqual(["STRIPE_SK"])
    expect(buildEnv(secrets, { allow: [], deny: [/_SK$/i] }, undefined, undefined)).not.toHaveProperty("STRIPE_SK")
  })

  it("keeps ordinary variables that merely look close to a credential", () => {
    const ordinary = {
      PATH: "/usr/local/bin:/usr/bin",
      HOME: "/home/me",
      LANG: "en_US.UTF-8",
      PWD: "/work",
      OLDPWD: "/",
      XAUTHORITY: "/home/me/.Xauthority",
      GIT_AUTHOR_NAME: "Me",
      GIT_AUTHOR_EMAIL: "me@example.com",
      npm_config_registry: "https://registry.npmjs.org/",
      npm_config_cache: "/home/me/.npm",
      npm_config_user_agent: "npm/10.8.2 node/v20.20.2 linux x64",
      LD_LIBRARY_PATH: "/opt/lib",
      HTTP_PROXY: "http://proxy.corp:3128",
      NO_PROXY: "localhost,127.0.0.1",
      REPO_URL: "https://git@github.com/me/repo.git",
      BYPASS: "1",
      DOCS_URL: "https://example.com/a:b@c",
      IPV6_URL: "http://[::1]:8080/x@y",
      EMAIL: "me:x@example.com"
    }
    expect(buildEnv(ordinary, noScrubExtras, undefined, undefined)).toMatchObject(ordinary)
  })

  it("envAllow keeps any credential-shaped name, SSH_AUTH_SOCK and URL-valued ones included", () => {
    const allow = Object.keys(secrets)
    expect(buildEnv(secrets, { allow, deny: [] }, undefined, undefined)).toMatchObject(secrets)
  })

  it("never modifies its input", () => {
    const copy = { ...inherited }
    buildEnv(copy, noScrubExtras, { A: "1" }, { DSH_X: "2" })
    expect(copy).toEqual(inherited)
  })
})

describe("makeEnvBuilder", () => {
  it("equals buildEnv for every call as the inherited names and values change", () => {
    const build = makeEnvBuilder(noScrubExtras)
    const host: Record<string, string | undefined> = { PATH: "/bin", HOME: "/root" }
    const check = (env?: Record<string, string>, dshEnv?: Record<string, string>) =>
      expect(build(host, env, dshEnv)).toStrictEqual(buildEnv(host, noScrubExtras, env, dshEnv))
    check()
    check({ A: "1" }, { DSH_X: "2" })
    check()
    host.PATH = "/usr/bin"
    check()
    host.GITHUB_TOKEN = "ghp_x"
    check()
    host.LANG = "C"
    delete host.HOME
    check({ TERM: "vt100" })
  })

  it("hands out a fresh object each call", () => {
    const build = makeEnvBuilder(noScrubExtras)
    const first = build(inherited, undefined, undefined)
    first.PATH = "changed"
    expect(build(inherited, undefined, undefined).PATH).toBe(inherited.PATH)
  })
})

/** Sets host environment variables for the duration of `effect` (the executor reads process.env per spawn). */
const withHostEnv = (variables: Record<string, string>) => <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.acquireUseRelease(
    Effect.sync(() => {
      const saved = Object.fromEntries(Object.keys(variables).map((name) => [name, process.env[name]]))
      Object.assign(process.env, variables)
      return saved
    }),
    () => effect,
    (saved) =>
      Effect.sync(() => {
        for (const [name, value] of Object.entries(saved)) {
          if (value === undefined) delete process.env[name]
          else process.env[name] = value
        }
      })
  )

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

  it.effect("an invalid number fails the layer with the contract message", () =>
    Effect.gen(function*() {
      for (const field of ["timeoutMs", "maxTimeoutMs", "maxOutputBytes", "maxSpillBytes", "maxSpillTotalBytes", "graceMs"] as const) {
        for (const value of [0, -5, Number.NaN, Number.POSITIVE_INFINITY]) {
          const error = yield* Effect.flip(Layer.build(LocalBashExecutor.layer({ [field]: value })).pipe(Effect.scoped))
          expect(error.message).toBe(`bash-local: ${field} must be a positive finite number`)
        }
      }
    }))

  it.effect("settings come from EFFECT_BASH_* variables through Effect Config", () =>
    Effect.gen(function*() {
      const spec = yield* resolve({ command: "true" })
      expect(spec).toMatchObject({ timeoutMs: 4_321, stdoutMaxBytes: 99, workdir: "/srv" })
      const error = yield* Effect.flip(
        Layer.build(LocalBashExecutor.layerConfig()).pipe(
          Effect.scoped,
          Effect.withConfigProvider(ConfigProvider.fromMap(new Map([["EFFECT_BASH_GRACE_MS", "-1"]]), { pathDelim: "_" }))
        )
      )
      expect(error.message).toBe("bash-local: graceMs must be a positive finite number")
    }).pipe(
      Effect.provide(LocalBashExecutor.layerConfig()),
      Effect.withConfigProvider(
        ConfigProvider.fromMap(
          new Map([
            ["EFFECT_BASH_TIMEOUT_MS", "4321"],
            ["EFFECT_BASH_MAX_OUTPUT_BYTES", "99"],
            ["EFFECT_BASH_CWD", "/srv"]
          ]),
          // The shape of ConfigProvider.fromEnv.
          { pathDelim: "_" }
        )
      )
    ))
})
