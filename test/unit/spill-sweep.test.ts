/**
 * The sweep of dead hosts' spill directories runs beside the spill store: a store whose sweep cannot
 * finish (a spill parent that never answers) is still ready, and still closes.
 */
import * as FileSystem from "@effect/platform/FileSystem"
import * as NodePath from "@effect/platform-node/NodePath"
import { describe, expect, it } from "@effect/vitest"
import { Deferred, Effect, Exit, Layer, Scope } from "effect"
import { makeSpillStore } from "../../src/layers/internal/executor/SpillStore.js"

describe("the sweep of dead hosts' spill directories", () => {
  it.effect("does not hold up the store, and stops when the store closes", () =>
    Effect.gen(function*() {
      const reading = yield* Deferred.make<void>()
      const fsLayer = FileSystem.layerNoop({
        readDirectory: () => Deferred.succeed(reading, undefined).pipe(Effect.zipRight(Effect.never))
      })
      const scope = yield* Scope.make()
      const store = yield* makeSpillStore({ keep: false, maxTotalBytes: 1 << 20 }).pipe(
        Scope.extend(scope),
        Effect.provide(Layer.merge(fsLayer, NodePath.layer))
      )
      // The store is here while the sweep it started is still reading (a store that waited for the
      // sweep would never be).
      expect(store.open).toBeTypeOf("function")
      yield* Deferred.await(reading)
      // Closing interrupts the sweep instead of waiting for it.
      yield* Scope.close(scope, Exit.void)
    }))
})
