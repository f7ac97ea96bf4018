/**
 * One pass into the executor: a `bash` call resolves its request once, learns the executor's default
 * workdir without resolving a throwaway request, and is aborted by interruption — no `AbortSignal`
 * is threaded through the tools; hosts translate theirs at the edge.
 */
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import * as path from "node:path"
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import * as NodePath from "@effect/platform-node/NodePath"
import { afterAll, describe, expect, it } from "@effect/vitest"
import { Chunk, Effect, Exit, Fiber, Layer, Queue, Ref, TestClock } from "effect"
import * as LocalBashExecutor from "../../src/layers/LocalBashExecutor.js"
import * as SessionPersistenceJsonl from "../../src/layers/SessionPersistenceJsonl.js"
import { AgentTools } from "../../src/services/AgentTools.js"
import { BashExecutor } from "../../src/services/BashExecutor.js"
import { SessionPersistence } from "../../src/services/SessionPersistence.js"
import * as FakeProcessSpawner from "../../src/testing/FakeProcessSpawner.js"
import { FakeSpawnerControl } from "../../src/testing/FakeProcessSpawner.js"
import * as ScriptedBashExecutor from "../../src/testing/ScriptedBashExecutor.js"
import { callTool, compose, composeWith } from "../support/tools.js"

const scratch = mkdtempSync(path.join(tmpdir(), "tool-onepass-"))
afterAll(() => rmSync(scratch, { recursive: true, force: true }))

const work = { command: "work", description: "Work" }

/** The scripted executor, counting the requests it is asked to resolve. */
const countingResolves = (count: Ref.Ref<number>) =>
  Layer.effect(
    BashExecutor,
    Effect.map(BashExecutor, (executor) => ({
      ...executor,
      resolve: (request: BashExecutor.Request) => Effect.zipRight(Ref.update(count, (n) => n + 1), executor.resolve(request))
    }))
  ).pipe(Layer.provideMerge(ScriptedBashExecutor.layer({ cwd: "/srv/app" })))

/** The local executor over the fake spawner (TestClock drives it). */
const fakeLocal = LocalBashExecutor.layerWith({ cwd: "/", graceMs: 100 }).pipe(
  Layer.provideMerge(FakeProcessSpawner.layer()),
  Layer.provide(Layer.merge(NodeFileSystem.layer, NodePath.layer)),
  Layer.orDie
)

describe("one pass into the executor", () => {
  it.effect("a relative workdir without a session is taken from the default workdir, with one resolve", () =>
    Effect.gen(function*() {
      const count = yield* Ref.make(0)
      const [result, calls] = yield* callTool("bash", { ...work, workdir: "sub" }).pipe(
        Effect.zip(Effect.flatMap(ScriptedBashExecutor.ScriptedBashExecutor, (executor) => executor.calls)),
        Effect.provide(compose({ executor: countingResolves(count) }))
      )
      expect(result.isError).toBe(false)
      expect(calls.map((call) => call.spec.workdir)).toEqual(["/srv/app/sub"])
      expect(yield* Ref.get(count)).toBe(1)
    }))
})

describe("abort is interruption", () => {
  it.effect("an interrupted watched call kills its command and still delivers the output read until then", () =>
    Effect.gen(function*() {
      const control = yield* FakeSpawnerControl
      const tools = yield* AgentTools
      const updates = yield* Queue.unbounded<string>()
      const call = yield* Effect.fork(tools.call("bash", work, { callId: "c1", onProgress: (text) => Queue.offer(updates, text) }))
      const fake = yield* control.next
      yield* fake.writeStdout("one\n")
      expect(yield* Queue.take(updates)).toBe("one\n")
      yield* fake.writeStdout("two\npart")
      yield* TestClock.adjust(100)
      // Both lines have been read: the complete one was shown, the partial one is held.
      expect(yield* Queue.take(updates)).toBe("two\n")
      const exit = yield* Fiber.interrupt(call)
      expect(Exit.isInterrupted(exit)).toBe(true)
      expect((yield* fake.signals).map((sent) => sent.signal)).toEqual(["SIGTERM"])
      expect(Chunk.toReadonlyArray(yield* Queue.takeAll(updates))).toEqual(["part\n"])
    }).pipe(Effect.provide(composeWith({ executor: fakeLocal, services: Layer.empty }))))

  it.effect("an interrupted call is recorded as the error `command aborted`", () =>
    Effect.gen(function*() {
      const control = yield* FakeSpawnerControl
      const tools = yield* AgentTools
      const session = { id: "aborted" }
      const call = yield* Effect.fork(tools.call("bash", work, { callId: "c1", session }))
      yield* control.next
      yield* Fiber.interrupt(call)
      const records = yield* Effect.flatMap(SessionPersistence, (persistence) => persistence.replay(session))
      expect(records).toEqual([{
        session,
        callId: "c1",
        toolName: "bash",
        arguments: work,
        isError: true,
        result: { message: "command aborted" },
        text: "Error: command aborted"
      }])
    }).pipe(Effect.provide(composeWith({
      executor: fakeLocal,
      services: SessionPersistenceJsonl.layer({ directory: path.join(scratch, "records") })
    }))))
})
