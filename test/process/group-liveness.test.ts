/**
 * The Node spawner's group liveness with many groups: one `/proc` scan answers a poll round of every
 * group, and the groups still die and are reported dead.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import NodeFsDefault from "node:fs"
import { syncBuiltinESMExports } from "node:module"
import * as NodeProcessSpawner from "../../src/layers/NodeProcessSpawner.js"
import { ProcessSpawner } from "../../src/services/ProcessSpawner.js"
import { liveMembersOf } from "../support/processes.js"

const groups = 200

/** Counts the spawner's scans of `/proc` while `effect` runs. */
const countingProcScans = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.acquireUseRelease(
    Effect.sync(() => {
      const original = NodeFsDefault.readdirSync
      const counter = { scans: 0, restore: () => {} }
      NodeFsDefault.readdirSync = ((...args: Parameters<typeof original>) => {
        if (args[0] === "/proc") counter.scans++
        return original(...args)
      }) as typeof original
      syncBuiltinESMExports()
      counter.restore = () => {
        NodeFsDefault.readdirSync = original
        syncBuiltinESMExports()
      }
      return counter
    }),
    (counter) => Effect.map(effect, (value) => ({ value, scans: counter.scans })),
    (counter) => Effect.sync(counter.restore)
  )

describe("NodeProcessSpawner group liveness", () => {
  it.live(`${groups} groups: a poll round of all of them costs one /proc scan, and a killed group reads dead`, () =>
    Effect.gen(function*() {
      const spawner = yield* ProcessSpawner
      const env = { PATH: process.env.PATH ?? "/usr/bin:/bin" }
      const spawned = yield* Effect.forEach(
        Array.from({ length: groups }, () => spawner.spawn({ command: "exec sleep 300", cwd: "/", env })),
        (spawn) => spawn,
        { concurrency: 16 }
      )
      const round = Effect.forEach(spawned, (child) => child.groupAlive)
      const first = yield* countingProcScans(round)
      expect(first.value.every((alive) => alive)).toBe(true)
      expect(first.scans).toBe(1)
      yield* Effect.forEach(spawned, (child) => child.signalGroup("SIGKILL"), { discard: true })
      yield* Effect.forEach(spawned, (child) => child.exit, { discard: true })
      const after = yield* countingProcScans(round)
      expect(after.value.some((alive) => alive)).toBe(false)
      expect(liveMembersOf(spawned.map((child) => child.pid))).toEqual([])
    }).pipe(Effect.scoped, Effect.provide(NodeProcessSpawner.layer)), 240_000)
})
