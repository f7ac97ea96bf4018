/**
 * One settings Schema per configurable layer: the defaults, the bounds and the `EFFECT_BASH_*`
 * variables all come from it, and `layerConfig` reads the settings from variables a user names.
 */
import { describe, expect, it } from "@effect/vitest"
import { Config, ConfigError, Effect, Layer } from "effect"
import { settingsFlagNames } from "../../src/cli/settings.js"
import { Config as CordisConfig } from "../../src/cordis/deepseek/config.js"
import * as BashEnvRegistryLive from "../../src/layers/BashEnvRegistryLive.js"
import * as LocalBashExecutor from "../../src/layers/LocalBashExecutor.js"
import * as SandboxBashExecutor from "../../src/layers/SandboxBashExecutor.js"
import * as SessionPersistenceJsonl from "../../src/layers/SessionPersistenceJsonl.js"
import * as TasksLive from "../../src/layers/TasksLive.js"
import { BashEnvRegistry } from "../../src/services/BashEnvRegistry.js"
import { SessionPersistence } from "../../src/services/SessionPersistence.js"
import { Tasks } from "../../src/services/Tasks.js"
import { envConfigProvider } from "../support/configEnv.js"

const withEnv = (env: Record<string, string>) =>
  Effect.withConfigProvider(envConfigProvider(env))

/** Why building `layer` failed (and released what it had built). */
const buildError = <A, E, R>(layer: Layer.Layer<A, E, R>) => Effect.flip(Layer.build(layer).pipe(Effect.scoped))

describe("settings Schemas", () => {
  it("the defaults are the reference's, decoded from the Schemas", () => {
    expect(LocalBashExecutor.defaults).toEqual({
      timeoutMs: 120_000,
      maxTimeoutMs: 600_000,
      maxOutputBytes: 64_000,
      maxSpillBytes: 67_108_864,
      maxSpillTotalBytes: 1_073_741_824,
      graceMs: 3_000,
      keepSpillFiles: false,
      directSpawn: false,
      envAllow: [],
      envDeny: [],
      maxBackground: 16,
      maxFinishedBackground: 64,
      contain: false,
      bwrapPath: "bwrap"
    })
    expect(SandboxBashExecutor.defaults).toMatchObject({
      sandboxMode: "read-only",
      network: "host",
      probeTimeoutMs: 5_000,
      hide: expect.arrayContaining(["~/.ssh", "~/.aws"])
    })
    expect(TasksLive.defaults).toEqual({ maxRetainedFinished: 100, disposeTimeoutMs: 10_000 })
  })

  it.effect("the EFFECT_BASH_* variables keep their names", () =>
    Effect.gen(function*() {
      const input = yield* SandboxBashExecutor.environment.pipe(withEnv({
        EFFECT_BASH_CWD: "/w",
        EFFECT_BASH_TIMEOUT_MS: "1",
        EFFECT_BASH_MAX_TIMEOUT_MS: "2",
        EFFECT_BASH_MAX_OUTPUT_BYTES: "3",
        EFFECT_BASH_MAX_SPILL_BYTES: "4",
        EFFECT_BASH_MAX_SPILL_TOTAL_BYTES: "5",
        EFFECT_BASH_GRACE_MS: "6",
        EFFECT_BASH_KEEP_SPILL_FILES: "true",
        EFFECT_BASH_SPILL_DIR: "/spill",
        EFFECT_BASH_ENV_ALLOW: "A,B",
        EFFECT_BASH_ENV_DENY: "^X_",
        EFFECT_BASH_MAX_BACKGROUND: "7",
        EFFECT_BASH_MAX_FINISHED_BACKGROUND: "8",
        EFFECT_BASH_CONTAIN: "true",
        EFFECT_BASH_BWRAP_PATH: "/opt/bwrap",
        EFFECT_BASH_SANDBOX: "workspace-write",
        EFFECT_BASH_WORKSPACE_ROOT: "/w",
        EFFECT_BASH_NETWORK: "none",
        EFFECT_BASH_ALLOW_UNIX_SOCKETS: "true",
        EFFECT_BASH_HIDE: "~/.a,~/.b",
        EFFECT_BASH_PROBE_TIMEOUT_MS: "9"
      }))
      expect(input).toEqual({
        cwd: "/w",
        timeoutMs: 1,
        maxTimeoutMs: 2,
        maxOutputBytes: 3,
        maxSpillBytes: 4,
        maxSpillTotalBytes: 5,
        graceMs: 6,
        keepSpillFiles: true,
        spillParent: "/spill",
        envAllow: ["A", "B"],
        envDeny: ["^X_"],
        maxBackground: 7,
        maxFinishedBackground: 8,
        contain: true,
        bwrapPath: "/opt/bwrap",
        sandboxMode: "workspace-write",
        workspaceRoot: "/w",
        network: "none",
        allowUnixSockets: true,
        hide: ["~/.a", "~/.b"],
        probeTimeoutMs: 9
      })
      expect(yield* SandboxBashExecutor.environment.pipe(withEnv({}))).toEqual({})
    }))

  it("the CLI flags keep their names", () => {
    expect(settingsFlagNames).toEqual({
      valued: [
        "workdir",
        "timeout-ms",
        "max-timeout-ms",
        "max-output-bytes",
        "max-spill-bytes",
        "max-spill-total-bytes",
        "grace-ms",
        "spill-dir",
        "env-allow",
        "env-deny",
        "max-background",
        "max-finished-background",
        "sandbox",
        "workspace-root",
        "network",
        "network-allow",
        "network-deny",
        "network-host",
        "container-image",
        "container-network",
        "container-memory-mb",
        "container-pids-limit",
        "container-user",
        "container-volume",
        "approval-timeout-ms"
      ],
      boolean: ["keep-spill-files", "direct-spawn", "contain", "allow-unix-sockets"]
    })
  })

})

describe("an executor layer its settings fail", () => {
  // The Node layers themselves, not `layerWith` over a fake spawner: the unit setup fails a test that
  // tries to start a process, so these also show that the settings are checked before the spawner
  // starts its reaper or loads posix_spawn.
  it.effect("fails with the contract message for every bad number, and starts no process", () =>
    Effect.gen(function*() {
      const fields = ["timeoutMs", "maxTimeoutMs", "maxOutputBytes", "maxSpillBytes", "maxSpillTotalBytes", "graceMs"] as const
      const cases = fields.flatMap((field) => [0, -5, Number.NaN, Number.POSITIVE_INFINITY].map((value) => ({ field, value })))
      for (const { field, value } of cases) {
        const error = yield* buildError(LocalBashExecutor.layer({ [field]: value }))
        expect(error.message).toBe(`bash-local: ${field} must be a positive finite number`)
      }
    }))

  it.effect("rejects a bad envAllow name or envDeny pattern, as every surface does", () =>
    Effect.gen(function*() {
      const error = yield* buildError(LocalBashExecutor.layer({ envAllow: ["NOT A NAME"] }))
      expect(error).toMatchObject({
        field: "envAllow",
        message: "bash-local: envAllow name \"NOT A NAME\" is not an environment variable name"
      })
      const pattern = yield* buildError(LocalBashExecutor.layer({ envDeny: ["(unclosed"] }))
      expect(pattern.message).toBe("bash-local: envDeny pattern \"(unclosed\" is not a valid regular expression")
      const cordis = CordisConfig["~standard"].validate({ envDeny: ["(unclosed"] })
      expect("issues" in cordis ? cordis.issues?.map((issue) => issue.path) : undefined).toEqual([["envDeny", 0]])
    }))

  it.effect("a bad value read through Config fails with the layer's error", () =>
    Effect.gen(function*() {
      const error = yield* buildError(LocalBashExecutor.layerConfig({ graceMs: Config.number("APP_GRACE") }))
      expect(error.message).toBe("bash-local: graceMs must be a positive finite number")
    }).pipe(withEnv({ APP_GRACE: "-1" })))

  it.effect("the sandboxing executor's settings are checked before it starts anything too, naming the field", () =>
    Effect.gen(function*() {
      const build = (settings: SandboxBashExecutor.Settings.Input) => buildError(SandboxBashExecutor.layer(settings))
      expect(yield* build({ sandboxMode: "open" as never })).toMatchObject({
        field: "sandboxMode",
        message: "bash-sandbox: sandboxMode must be one of read-only, workspace-write, danger-full-access, got \"open\""
      })
      expect(yield* build({ network: "lan" as never })).toMatchObject({ field: "network" })
      expect((yield* build({ graceMs: -1 })).message).toBe("bash-local: graceMs must be a positive finite number")
      expect((yield* build({ probeTimeoutMs: 0 })).message).toBe("bash-sandbox: probeTimeoutMs must be a positive finite number")
    }))
})

describe("layerConfig", () => {
  it.scoped("the task runtime reads the variables a user names, and names a bad one", () =>
    Effect.gen(function*() {
      const finished: Tasks.Work = { read: Effect.succeed(""), cancel: Effect.void, done: Effect.succeed({ status: "completed" }) }
      const kept = yield* Effect.gen(function*() {
        const tasks = yield* Tasks
        yield* tasks.attachSurface
        for (const label of ["a", "b", "c"]) {
          const task = yield* tasks.start({ kind: "bash", label }, () => Effect.succeed(finished))
          yield* tasks.wait(task.id, 60_000, undefined)
        }
        return (yield* tasks.list(undefined)).map((task) => task.label)
      }).pipe(Effect.provide(TasksLive.layerConfig({ maxRetainedFinished: Config.integer("KEEP") })), withEnv({ KEEP: "1" }))
      expect(kept).toEqual(["c"])
      const error = yield* buildError(TasksLive.layerConfig({ maxRetainedFinished: Config.integer("KEEP") })).pipe(withEnv({ KEEP: "0" }))
      expect(ConfigError.isInvalidData(error) && error.message).toBe("tasks: maxRetainedFinished must be a positive integer")
    }))

  it.effect("the registry and the JSONL persistence read the variables a user names", () =>
    Effect.gen(function*() {
      const registry = yield* BashEnvRegistry
      const env = yield* registry.collect({ callId: "call-1", toolName: "bash" })
      expect(env.DSH_HOME).toBe("/opt/harness")
      const persistence = yield* SessionPersistence
      expect(yield* persistence.locate({ id: "s-1", cwd: "/" })).toMatchObject({
        value: { kind: "jsonl", path: expect.stringMatching(/^\/var\/sessions\//) }
      })
    }).pipe(
      Effect.provide(Layer.merge(
        BashEnvRegistryLive.layerConfig({ dshHome: Config.string("HARNESS_HOME") }),
        SessionPersistenceJsonl.layerConfig({ directory: Config.string("SESSIONS_DIR") })
      )),
      withEnv({ HARNESS_HOME: "/opt/harness", SESSIONS_DIR: "/var/sessions", DSH_HOME: "/elsewhere" })
    ))
})
