import * as NodeContext from "@effect/platform-node/NodeContext"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Option } from "effect"
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll } from "vitest"
import type { SettingsFlags } from "../../src/cli/settings.js"
import { resolveSettings } from "../../src/cli/settings.js"
import { envConfigProvider } from "../support/configEnv.js"

const noFlags: SettingsFlags = {
  cwd: Option.none(),
  timeoutMs: Option.none(),
  maxTimeoutMs: Option.none(),
  maxOutputBytes: Option.none(),
  maxSpillBytes: Option.none(),
  maxSpillTotalBytes: Option.none(),
  graceMs: Option.none(),
  keepSpillFiles: false,
  spillParent: Option.none(),
  envAllow: [],
  envDeny: [],
  maxBackground: Option.none(),
  maxFinishedBackground: Option.none(),
  contain: false,
  sandboxMode: Option.none(),
  workspaceRoot: Option.none(),
  network: Option.none(),
  "container.image": Option.none(),
  "container.network": Option.none(),
  "container.memoryMb": Option.none(),
  "container.pidsLimit": Option.none(),
  "approval.timeoutMs": Option.none()
}

const dir = mkdtempSync(join(tmpdir(), "effect-bash-settings-"))
const file = join(dir, "a-file")
writeFileSync(file, "")
afterAll(() => rmSync(dir, { recursive: true, force: true }))

/** Resolves `flags` against exactly the environment `env` (nothing inherited from this process). */
const resolve = (flags: SettingsFlags, env: Record<string, string> = {}) =>
  resolveSettings({ ...noFlags, ...flags }).pipe(
    Effect.withConfigProvider(envConfigProvider(env)),
    Effect.provide(NodeContext.layer)
  )

const failureOf = (flags: SettingsFlags, env: Record<string, string> = {}) =>
  Effect.flip(resolve(flags, env))

describe("resolveSettings", () => {
  it.effect("with nothing set, runs in the current directory on the executor's defaults", () =>
    Effect.gen(function*() {
      expect(yield* resolve({})).toEqual({ workdir: process.cwd(), executor: { cwd: process.cwd() } })
    }))

  it.effect("reads EFFECT_BASH_* variables", () =>
    Effect.gen(function*() {
      const settings = yield* resolve({}, {
        EFFECT_BASH_CWD: dir,
        EFFECT_BASH_TIMEOUT_MS: "5000",
        EFFECT_BASH_GRACE_MS: "250",
        EFFECT_BASH_KEEP_SPILL_FILES: "true",
        EFFECT_BASH_ENV_ALLOW: "GITHUB_TOKEN,NPM_TOKEN",
        EFFECT_BASH_MAX_BACKGROUND: "4",
        EFFECT_BASH_MAX_SPILL_TOTAL_BYTES: "1048576"
      })
      expect(settings).toEqual({
        workdir: dir,
        executor: {
          cwd: dir,
          timeoutMs: 5000,
          graceMs: 250,
          keepSpillFiles: true,
          envAllow: ["GITHUB_TOKEN", "NPM_TOKEN"],
          maxBackground: 4,
          maxSpillTotalBytes: 1_048_576
        }
      })
    }))

  it.effect("a flag wins over its variable; a relative --workdir becomes absolute", () =>
    Effect.gen(function*() {
      const settings = yield* resolve(
        {
          cwd: Option.some("."),
          timeoutMs: Option.some("750"),
          envDeny: ["^AWS_", "^GCP_"],
          keepSpillFiles: true,
          spillParent: Option.some(dir)
        },
        { EFFECT_BASH_TIMEOUT_MS: "5000", EFFECT_BASH_MAX_OUTPUT_BYTES: "1024", EFFECT_BASH_CWD: dir }
      )
      expect(settings).toEqual({
        workdir: process.cwd(),
        executor: {
          cwd: process.cwd(),
          timeoutMs: 750,
          maxOutputBytes: 1024,
          envDeny: ["^AWS_", "^GCP_"],
          keepSpillFiles: true,
          spillParent: dir
        }
      })
    }))

  it.effect("sandbox and containment: flags over EFFECT_BASH_SANDBOX / _NETWORK / _CONTAIN", () =>
    Effect.gen(function*() {
      const settings = yield* resolve(
        { sandboxMode: Option.some("workspace-write"), workspaceRoot: Option.some(".") },
        { EFFECT_BASH_SANDBOX: "read-only", EFFECT_BASH_NETWORK: "none", EFFECT_BASH_CONTAIN: "true" }
      )
      expect(settings).toEqual({
        workdir: process.cwd(),
        executor: { cwd: process.cwd(), contain: true },
        sandbox: { sandboxMode: "workspace-write", workspaceRoot: process.cwd(), network: "none" },
        approval: { timeoutMs: 120_000 }
      })
      expect(yield* failureOf({ workspaceRoot: Option.some(dir) })).toMatchObject({
        field: "--workspace-root",
        message: "--workspace-root: applies only with --sandbox"
      })
      expect(yield* failureOf({}, { EFFECT_BASH_SANDBOX: "everything" })).toMatchObject({ field: "EFFECT_BASH_SANDBOX" })
    }))

  it.effect("every sandbox setting needs a sandbox mode, and its error names the variable that set it", () =>
    Effect.gen(function*() {
      const variables = [["NETWORK", "none"], ["HIDE", "/x"], ["PROBE_TIMEOUT_MS", "100"], ["ALLOW_UNIX_SOCKETS", "true"]] as const
      for (const [name, value] of variables) {
        expect(yield* failureOf({}, { [`EFFECT_BASH_${name}`]: value })).toMatchObject({
          field: `EFFECT_BASH_${name}`,
          message: `EFFECT_BASH_${name}: applies only with --sandbox`
        })
      }
      expect(yield* failureOf({ network: Option.some("none") })).toMatchObject({ message: "--network: applies only with --sandbox" })
    }))

  it.effect("the approval timeout: flag over EFFECT_BASH_APPROVAL_TIMEOUT_MS, only with a sandbox, checked by name", () =>
    Effect.gen(function*() {
      const sandboxed = { sandboxMode: Option.some("read-only") }
      expect((yield* resolve(sandboxed, { EFFECT_BASH_APPROVAL_TIMEOUT_MS: "5000" })).approval).toEqual({ timeoutMs: 5000 })
      expect(
        (yield* resolve({ ...sandboxed, "approval.timeoutMs": Option.some("750") }, { EFFECT_BASH_APPROVAL_TIMEOUT_MS: "5000" }))
          .approval
      ).toEqual({ timeoutMs: 750 })
      expect(yield* failureOf({ ...sandboxed, "approval.timeoutMs": Option.some("soon") })).toMatchObject({
        field: "--approval-timeout-ms",
        message: "--approval-timeout-ms: expected a positive finite number, got \"soon\""
      })
      expect(yield* failureOf(sandboxed, { EFFECT_BASH_APPROVAL_TIMEOUT_MS: "0" })).toMatchObject({
        message: "EFFECT_BASH_APPROVAL_TIMEOUT_MS: expected a positive finite number, got 0"
      })
      expect(yield* failureOf({ "approval.timeoutMs": Option.some("750") })).toMatchObject({
        message: "--approval-timeout-ms: applies only with --sandbox"
      })
      expect(yield* failureOf({}, { EFFECT_BASH_APPROVAL_TIMEOUT_MS: "5000" })).toMatchObject({
        message: "EFFECT_BASH_APPROVAL_TIMEOUT_MS: applies only with --sandbox"
      })
    }))

  it.effect("a bad flag is named in the error", () =>
    Effect.gen(function*() {
      expect(yield* failureOf({ graceMs: Option.some("soon") })).toMatchObject({
        field: "--grace-ms",
        message: "--grace-ms: expected a positive finite number, got \"soon\""
      })
      expect(yield* failureOf({ maxSpillTotalBytes: Option.some("-1") })).toMatchObject({
        message: "--max-spill-total-bytes: expected a positive finite number, got \"-1\""
      })
      expect(yield* failureOf({ maxBackground: Option.some("0") })).toMatchObject({
        message: "--max-background: expected a positive integer, got \"0\""
      })
      expect(yield* failureOf({ maxBackground: Option.some("2.5") })).toMatchObject({
        message: "--max-background: expected a positive integer, got \"2.5\""
      })
      expect(yield* failureOf({ graceMs: Option.some("0x10") })).toMatchObject({
        message: "--grace-ms: expected a positive finite number, got \"0x10\""
      })
      expect(yield* failureOf({ envDeny: ["(unclosed"] })).toMatchObject({
        message: "--env-deny: \"(unclosed\" is not a valid regular expression"
      })
      expect(yield* failureOf({ envAllow: ["NOT A NAME"] })).toMatchObject({
        message: "--env-allow: \"NOT A NAME\" is not an environment variable name"
      })
      expect(yield* failureOf({ cwd: Option.some(file) })).toMatchObject({
        message: `--workdir: ${JSON.stringify(file)} is not a directory`
      })
    }))

  it.effect("a bad variable is named in the error", () =>
    Effect.gen(function*() {
      expect(yield* failureOf({}, { EFFECT_BASH_TIMEOUT_MS: "0" })).toMatchObject({
        field: "EFFECT_BASH_TIMEOUT_MS",
        message: "EFFECT_BASH_TIMEOUT_MS: expected a positive finite number, got 0"
      })
      expect(yield* failureOf({}, { EFFECT_BASH_MAX_SPILL_BYTES: "lots" })).toMatchObject({
        field: "EFFECT_BASH_MAX_SPILL_BYTES",
        message: expect.stringMatching(/^EFFECT_BASH_MAX_SPILL_BYTES: Expected a number value but received "lots"/)
      })
      // Numbers are read in decimal notation only, and named as written.
      for (const written of ["", " ", "0x10", "1_000", "Infinity"]) {
        expect(yield* failureOf({}, { EFFECT_BASH_GRACE_MS: written })).toMatchObject({
          message: `EFFECT_BASH_GRACE_MS: Expected a number value but received ${JSON.stringify(written)}`
        })
      }
      expect(yield* failureOf({}, { EFFECT_BASH_TIMEOUT_MS: "1e309" })).toMatchObject({
        message: "EFFECT_BASH_TIMEOUT_MS: expected a positive finite number, got Infinity"
      })
      expect(yield* failureOf({}, { EFFECT_BASH_MAX_BACKGROUND: "0.5" })).toMatchObject({
        message: "EFFECT_BASH_MAX_BACKGROUND: expected a positive integer, got 0.5"
      })
      expect(yield* failureOf({}, { EFFECT_BASH_KEEP_SPILL_FILES: "maybe" })).toMatchObject({
        field: "EFFECT_BASH_KEEP_SPILL_FILES"
      })
      expect(yield* failureOf({}, { EFFECT_BASH_CWD: join(dir, "missing") })).toMatchObject({
        message: `EFFECT_BASH_CWD: ${JSON.stringify(join(dir, "missing"))} is not a directory`
      })
    }))

  it.effect("the container flags and variables select the container executor; a flag wins over its variable", () =>
    Effect.gen(function*() {
      const settings = yield* resolve(
        { "container.image": Option.some("agent:1"), "container.memoryMb": Option.some("256") },
        { EFFECT_BASH_CONTAINER_MEMORY_MB: "64", EFFECT_BASH_CONTAINER_PIDS_LIMIT: "32", EFFECT_BASH_CONTAINER_CPUS: "0.5" }
      )
      expect(settings.container).toEqual({ image: "agent:1", memoryMb: 256, pidsLimit: 32, cpus: 0.5 })
      expect((yield* resolve({})).container).toBeUndefined()
    }))

  it.effect("a container setting is refused, naming its flag or variable, when bad, without an image, or with a sandbox", () =>
    Effect.gen(function*() {
      expect((yield* failureOf({ "container.image": Option.some("a:1"), "container.pidsLimit": Option.some("-3") })).message)
        .toBe(`--container-pids-limit: expected a positive integer, got "-3"`)
      expect((yield* failureOf({}, { EFFECT_BASH_CONTAINER_NETWORK: "bridge" })).message)
        .toBe("EFFECT_BASH_CONTAINER_NETWORK: applies only with --container-image (or EFFECT_BASH_CONTAINER_IMAGE)")
      expect((yield* failureOf({ "container.image": Option.some("a:1"), sandboxMode: Option.some("read-only") })).message)
        .toBe("--sandbox: not together with --container-image: choose the sandbox or containers")
    }))
})
