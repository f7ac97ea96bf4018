/**
 * The child's environment as built from the host's: credential scrubbing, allow/deny lists, shell
 * state and the DSH_* variables. The executor over real processes is in test/process/executor-env.test.ts.
 */
import { describe, expect, it } from "@effect/vitest"
import { buildEnv, makeEnvBuilder } from "../../src/layers/internal/executor/environment.js"

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

  it("drops inherited shell state (options, a glob filter, a read timeout, exported functions), even when allow-listed", () => {
    const shellState = {
      SHELLOPTS: "xtrace:errexit",
      BASHOPTS: "extglob:nullglob",
      POSIXLY_CORRECT: "1",
      GLOBIGNORE: "*.txt",
      TMOUT: "5",
      "BASH_FUNC_ls%%": "() {  echo hijacked\n}",
      "BASH_FUNC_module%%": "() {  eval $(/usr/bin/modulecmd bash $*)\n}",
      BASH_VERSION_PIN: "5"
    }
    const env = buildEnv(shellState, { allow: Object.keys(shellState), deny: [] }, undefined, undefined)
    for (
      const name of ["SHELLOPTS", "BASHOPTS", "POSIXLY_CORRECT", "GLOBIGNORE", "TMOUT", "BASH_FUNC_ls%%", "BASH_FUNC_module%%"]
    ) expect(env).not.toHaveProperty(name)
    expect(env.BASH_VERSION_PIN).toBe("5")
  })

  it("lets a caller's explicit env set shell state", () => {
    const env = buildEnv({}, noScrubExtras, { GLOBIGNORE: "*.txt", TMOUT: "5" }, undefined)
    expect(env).toMatchObject({ GLOBIGNORE: "*.txt", TMOUT: "5" })
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

  it("shares the base, frozen, with calls that add no variables", () => {
    const build = makeEnvBuilder(noScrubExtras)
    const plain = build(inherited, undefined, {})
    expect(build(inherited, {}, undefined)).toBe(plain)
    expect(() => {
      ;(plain as Record<string, string>).PATH = "changed"
    }).toThrow(TypeError)
    expect(build(inherited, undefined, undefined).PATH).toBe(inherited.PATH)
  })

  it("reuses one frozen merge while the base and the call's variables stay the same", () => {
    const build = makeEnvBuilder(noScrubExtras)
    const host: Record<string, string | undefined> = { PATH: "/bin" }
    const vars = { A: "1" }
    const first = build(host, vars, { DSH_SESSION_ID: "s1" })
    expect(build(host, { A: "1" }, { DSH_SESSION_ID: "s1" })).toBe(first)
    expect(() => {
      ;(first as Record<string, string>).A = "changed"
    }).toThrow(TypeError)
    // The caller changing its record after the call is a different call.
    vars.A = "2"
    expect(build(host, vars, { DSH_SESSION_ID: "s1" })).toMatchObject({ A: "2", DSH_SESSION_ID: "s1" })
    expect(build(host, { A: "2" }, { DSH_SESSION_ID: "s2" })).toMatchObject({ A: "2", DSH_SESSION_ID: "s2" })
    expect(build(host, { A: "2", B: "3" }, { DSH_SESSION_ID: "s2" })).toMatchObject({ B: "3" })
    expect(build(host, { A: "2" }, { DSH_SESSION_ID: "s2" })).not.toHaveProperty("B")
    // An undefined value (an untyped caller's) is a different variable from an absent one.
    const loose = { X: undefined } as unknown as Record<string, string>
    expect(build(host, loose, undefined)).toHaveProperty("PATH")
    expect(build(host, { PATH: undefined } as unknown as Record<string, string>, undefined).PATH).toBeUndefined()
    const before = build(host, { A: "2" }, undefined)
    host.PATH = "/usr/bin"
    const after = build(host, { A: "2" }, undefined)
    expect(after).not.toBe(before)
    expect(after.PATH).toBe("/usr/bin")
  })
})
