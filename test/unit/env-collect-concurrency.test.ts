/**
 * `BashEnvRegistry.collect` asks several contributors at once (a slow one does not delay the others);
 * a lone contributor is asked without a fiber of its own, with the same answer.
 */
import { describe, expect, it } from "@effect/vitest"
import { ConfigProvider, Deferred, Effect } from "effect"
import * as BashEnvRegistryLive from "../../src/layers/BashEnvRegistryLive.js"
import { BashEnvRegistry } from "../../src/services/BashEnvRegistry.js"

const execution = { callId: "call-1", toolName: "bash" }

describe("BashEnvRegistry.collect concurrency", () => {
  it.scoped("asks every contributor at once: each may wait for another's answer", () =>
    Effect.gen(function*() {
      const registry = yield* BashEnvRegistry
      const first = yield* Deferred.make<void>()
      const second = yield* Deferred.make<void>()
      // Each answers only after the other has been asked: asked one after the other, neither would.
      yield* registry.register({
        name: "a",
        keys: [{ key: "DSH_A", description: "a" }],
        resolve: () => Deferred.succeed(first, undefined).pipe(Effect.zipRight(Deferred.await(second)), Effect.as({ DSH_A: "a" }))
      })
      yield* registry.register({
        name: "b",
        keys: [{ key: "DSH_B", description: "b" }],
        resolve: () => Deferred.succeed(second, undefined).pipe(Effect.zipRight(Deferred.await(first)), Effect.as({ DSH_B: "b" }))
      })
      const env = yield* registry.collect(execution)
      expect(env).toMatchObject({ DSH_A: "a", DSH_B: "b" })
    }).pipe(
      Effect.provide(BashEnvRegistryLive.layer({ dshHome: "/opt/dsh" })),
      Effect.withConfigProvider(ConfigProvider.fromMap(new Map()))
    ))

  it.scoped("a lone contributor's answer is collected", () =>
    Effect.gen(function*() {
      const registry = yield* BashEnvRegistry
      yield* registry.register({
        name: "solo",
        keys: [{ key: "DSH_SOLO", description: "solo" }],
        resolve: () => Effect.succeed({ DSH_SOLO: "here" })
      })
      expect(yield* registry.collect(execution)).toEqual({ DSH_HOME: "/opt/dsh", DSH_SHELL: "1", DSH_SOLO: "here" })
    }).pipe(
      Effect.provide(BashEnvRegistryLive.layer({ dshHome: "/opt/dsh" })),
      Effect.withConfigProvider(ConfigProvider.fromMap(new Map()))
    ))
})
