/**
 * The branded spec (`BashExecutor.Spec`) means "every field checked": `run`/`start` trust it. The public
 * `resolveSpec` (what the test doubles' `resolve` is built on) is a producer of the brand, so it must
 * check the env lanes too — at fef4722 the executor's `run` re-checked them, now nothing does.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Either } from "effect"
import { resolveSpec } from "../../src/layers/resolveSpec.js"
import { BashExecutor } from "../../src/services/BashExecutor.js"
import * as ScriptedBashExecutor from "../../src/testing/ScriptedBashExecutor.js"

const defaults = { cwd: "/", timeoutMs: 1000, maxTimeoutMs: 5000, maxOutputBytes: 100 }

describe("a branded spec has checked env lanes", () => {
  it.effect("resolveSpec refuses a reserved name in env", () =>
    Effect.gen(function*() {
      const result = yield* Effect.either(resolveSpec(defaults, { command: "true", env: { DSH_SESSION_ID: "spoof" } }))
      expect(Either.isLeft(result) ? result.left.message : "resolved").toBe(
        "ordinary bash env cannot set reserved variable \"DSH_SESSION_ID\"; use dshEnv"
      )
    }))

  it.effect("resolveSpec refuses an ordinary name in dshEnv", () =>
    Effect.gen(function*() {
      const result = yield* Effect.either(resolveSpec(defaults, { command: "true", dshEnv: { PATH: "/x" } }))
      expect(Either.isLeft(result) ? result.left.message : "resolved").toBe(
        "managed bash env cannot set ordinary variable \"PATH\"; use env"
      )
    }))

  it.effect("the scripted double's resolve refuses it as the local executor does", () =>
    Effect.gen(function*() {
      const executor = yield* BashExecutor
      const result = yield* Effect.either(executor.resolve({ command: "true", env: { DSH_HOME: "/x" } }))
      expect(Either.isLeft(result) ? result.left.message : "resolved").toBe(
        "ordinary bash env cannot set reserved variable \"DSH_HOME\"; use dshEnv"
      )
    }).pipe(Effect.provide(ScriptedBashExecutor.layer())))
})
