/**
 * `BashStack.layer` builds its services in one scoped constructor; it composes them as the merge of
 * layers it replaces: layers given to it are shared with the app's, what one sets in its fiber stays
 * there, and the services release together after the tools.
 */
import { describe, expect, it } from "@effect/vitest"
import { ConfigProvider, Context, Deferred, Effect, Layer } from "effect"
import * as BashStack from "../../src/BashStack.js"
import { Approval } from "../../src/services/Approval.js"
import { BashEnvRegistry } from "../../src/services/BashEnvRegistry.js"
import { SessionPersistence } from "../../src/services/SessionPersistence.js"
import * as ScriptedBashExecutor from "../../src/testing/ScriptedBashExecutor.js"

class Db extends Context.Tag("test/Db")<Db, { readonly id: number }>() {}

const noPersistence = SessionPersistence.of({
  locate: () => Effect.succeedNone,
  record: () => Effect.void,
  replay: () => Effect.succeed([])
})

describe("BashStack composition", () => {
  it.effect("a layer given to it twice, and used by the app too, is built once", () =>
    Effect.gen(function*() {
      let builds = 0
      const db = Layer.effect(Db, Effect.sync(() => ({ id: ++builds })))
      const approval = Layer.provide(Layer.effect(Approval, Effect.as(Db, Approval.of({ request: () => Effect.succeed("rejected" as const) }))), db)
      const persistence = Layer.provide(Layer.effect(SessionPersistence, Effect.as(Db, noPersistence)), db)
      const stack = BashStack.layer({}, { executor: ScriptedBashExecutor.layer(), approval, persistence: () => persistence })
      yield* Effect.provide(Db, Layer.merge(stack, db))
      expect(builds).toBe(1)
    }))

  it.effect("what the executor's layer sets in its fiber does not reach the other services", () =>
    Effect.gen(function*() {
      const executor = Layer.merge(
        ScriptedBashExecutor.layer(),
        Layer.setConfigProvider(ConfigProvider.fromMap(new Map([["DSH_HOME", "/from-the-executor-layer"]])))
      )
      const env = yield* Effect.flatMap(BashEnvRegistry, (registry) =>
        registry.collect({ callId: "call-1", toolName: "bash" })).pipe(
          Effect.provide(BashStack.layer({ dshHome: "/configured-home" }, { executor }))
        )
      expect(env.DSH_HOME).toBe("/configured-home")
      const unset = yield* Effect.flatMap(BashEnvRegistry, (registry) =>
        registry.collect({ callId: "call-1", toolName: "bash" })).pipe(
          Effect.provide(BashStack.layer({}, { executor })),
          Effect.withConfigProvider(ConfigProvider.fromMap(new Map([["DSH_HOME", "/from-the-app"]])))
        )
      expect(unset.DSH_HOME).toBe("/from-the-app")
    }))

  it.live("the services release together: the executor's release may wait for persistence's", () =>
    Effect.gen(function*() {
      const released = yield* Deferred.make<void>()
      const executor = Layer.merge(
        ScriptedBashExecutor.layer(),
        Layer.scopedDiscard(Effect.addFinalizer(() => Deferred.await(released)))
      )
      const persistence = Layer.merge(
        Layer.succeed(SessionPersistence, noPersistence),
        Layer.scopedDiscard(Effect.addFinalizer(() => Deferred.succeed(released, undefined)))
      )
      const exit = yield* Effect.void.pipe(
        Effect.provide(BashStack.layer({}, { executor, persistence: () => persistence })),
        // Bounds a release that waits forever (one after the other, the executor's would).
        Effect.timeout("5 seconds"),
        Effect.exit
      )
      expect(exit._tag).toBe("Success")
    }))
})
