/**
 * The settings Schemas through the local executor's layer, which starts its host-death reaper (a real
 * process): the layer rejects what the Schema rejects, and `layerConfig` reads variables a user names.
 */
import { describe, expect, it } from "@effect/vitest"
import { Config, ConfigProvider, Effect, Layer } from "effect"
import { Config as CordisConfig } from "../../src/cordis/config.js"
import * as LocalBashExecutor from "../../src/layers/LocalBashExecutor.js"
import { BashExecutor } from "../../src/services/BashExecutor.js"

const withEnv = (env: Record<string, string>) =>
  Effect.withConfigProvider(ConfigProvider.fromMap(new Map(Object.entries(env)), { pathDelim: "_" }))

describe("settings Schemas, through the executor layer", () => {
  it.effect("every surface checks what the Schema checks: the layer now rejects a bad envAllow name too", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(Layer.build(LocalBashExecutor.layer({ envAllow: ["NOT A NAME"] })).pipe(Effect.scoped))
      expect(error).toMatchObject({
        field: "envAllow",
        message: "bash-local: envAllow name \"NOT A NAME\" is not an environment variable name"
      })
      const pattern = yield* Effect.flip(Layer.build(LocalBashExecutor.layer({ envDeny: ["(unclosed"] })).pipe(Effect.scoped))
      expect(pattern.message).toBe("bash-local: envDeny pattern \"(unclosed\" is not a valid regular expression")
      const cordis = CordisConfig["~standard"].validate({ envDeny: ["(unclosed"] })
      expect("issues" in cordis ? cordis.issues?.map((issue) => issue.path) : undefined).toEqual([["envDeny", 0]])
    }))
})

describe("layerConfig, through the executor layer", () => {
  it.effect("the local executor reads the variables a user names", () =>
    Effect.gen(function*() {
      const executor = yield* BashExecutor
      expect(yield* executor.resolve({ command: "true" })).toMatchObject({ workdir: "/srv", timeoutMs: 4_321 })
    }).pipe(
      Effect.provide(LocalBashExecutor.layerConfig({
        cwd: Config.string("APP_SHELL_DIR"),
        timeoutMs: Config.number("APP_SHELL_TIMEOUT")
      })),
      withEnv({ APP_SHELL_DIR: "/srv", APP_SHELL_TIMEOUT: "4321", EFFECT_BASH_TIMEOUT_MS: "1" })
    ))

  it.effect("a bad value read through Config fails with the layer's error", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(
        Layer.build(LocalBashExecutor.layerConfig({ graceMs: Config.number("APP_GRACE") })).pipe(Effect.scoped)
      )
      expect(error.message).toBe("bash-local: graceMs must be a positive finite number")
    }).pipe(withEnv({ APP_GRACE: "-1" })))
})
