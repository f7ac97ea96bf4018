import * as NodeCrypto from "node:crypto"
import * as NodeFs from "node:fs"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"
import { SystemError } from "@effect/platform/Error"
import * as FileSystem from "@effect/platform/FileSystem"
import * as NodePathLayer from "@effect/platform-node/NodePath"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Exit, Layer, Option, Scope } from "effect"
import * as BashEnvRegistryLive from "../../src/layers/BashEnvRegistryLive.js"
import * as SessionJsonlEnvContributor from "../../src/layers/SessionJsonlEnvContributor.js"
import * as SessionPersistenceJsonl from "../../src/layers/SessionPersistenceJsonl.js"
import { BashEnvRegistry } from "../../src/services/BashEnvRegistry.js"
import { SessionPersistence } from "../../src/services/SessionPersistence.js"
import type { ToolSession } from "../../src/services/ToolExecution.js"

/** A fresh private directory, removed when the test's scope closes. */
const tempDir = Effect.acquireRelease(
  Effect.sync(() => NodeFs.mkdtempSync(NodePath.join(NodeOs.tmpdir(), "effect-bash-sessions-"))),
  (dir) => Effect.sync(() => NodeFs.rmSync(dir, { recursive: true, force: true }))
)

const modeOf = (path: string) => NodeFs.statSync(path).mode & 0o777

const session: ToolSession = { id: "session-1", cwd: "/work/project" }

const callRecord = (callId: string, overrides: Partial<SessionPersistence.ToolCallRecord> = {}): SessionPersistence.ToolCallRecord => ({
  session,
  callId,
  toolName: "bash",
  arguments: { command: "echo hi", description: "print a greeting to the terminal" },
  isError: false,
  result: { kind: "foreground", exitCode: 0, signal: null, stdout: { text: "hi\n", truncated: false } },
  text: "hi\n",
  ...overrides
})

const withJsonl = <A, E>(directory: string, program: Effect.Effect<A, E, SessionPersistence>) =>
  Effect.provide(program, SessionPersistenceJsonl.layer({ directory }))

describe("SessionPersistenceJsonl.locate", () => {
  it.scoped("answers jsonl with <absolute dir>/<id>.jsonl", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const location = yield* withJsonl(dir, Effect.flatMap(SessionPersistence, (p) => p.locate(session)))
      expect(location).toEqual(Option.some({ kind: "jsonl", path: NodePath.join(dir, "session-1.jsonl") }))

      const relative = NodePath.relative(process.cwd(), dir)
      const fromRelative = yield* withJsonl(relative, Effect.flatMap(SessionPersistence, (p) => p.locate(session)))
      expect(fromRelative).toEqual(location)
    }))

  it.scoped("keeps every id inside the directory, one distinct file per id", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const long = "z".repeat(400)
      // An id spelled like the shortened name of a long id must not share its file.
      const lookalike = `${"z".repeat(100)}-${NodeCrypto.createHash("sha256").update(long, "utf8").digest("hex")}`
      const ids = ["../../etc/passwd", "a/b", "a_b", "a%2Fb", "a%002Fb", "..", ".", "x\\y", "ünï code", "\uD800", long, `${long}!`, lookalike]
      const paths = yield* withJsonl(
        dir,
        Effect.flatMap(SessionPersistence, (p) =>
          Effect.forEach(ids, (id) =>
            p.locate({ id }).pipe(Effect.map(Option.getOrThrow), Effect.map((location) => location.path))))
      )
      for (const path of paths) {
        expect(NodePath.dirname(path)).toBe(dir)
        expect(NodePath.basename(path)).toMatch(/\.jsonl$/)
        expect(Buffer.byteLength(NodePath.basename(path))).toBeLessThanOrEqual(255)
      }
      expect(new Set(paths).size).toBe(ids.length)
    }))

  it.scoped("locates nothing for an empty session id", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      expect(yield* withJsonl(dir, Effect.flatMap(SessionPersistence, (p) => p.locate({ id: "" })))).toEqual(
        Option.none()
      )
    }))
})

describe("SessionPersistenceJsonl.record and replay", () => {
  it.scoped("round-trips records in order, one JSON line each", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const first = callRecord("call-1")
      const second = callRecord("call-2", {
        isError: true,
        result: { message: "command aborted" },
        text: "Error: command aborted"
      })
      const other = callRecord("call-3", { session: { id: "session-2" } })
      const replayed = yield* withJsonl(
        dir,
        Effect.gen(function*() {
          const persistence = yield* SessionPersistence
          yield* persistence.record(first)
          yield* persistence.record(other)
          yield* persistence.record(second)
          return {
            mine: yield* persistence.replay(session),
            theirs: yield* persistence.replay({ id: "session-2" }),
            nobody: yield* persistence.replay({ id: "never-recorded" })
          }
        })
      )
      expect(replayed.mine).toEqual([first, second])
      expect(replayed.theirs).toEqual([other])
      expect(replayed.nobody).toEqual([])
      const lines = NodeFs.readFileSync(NodePath.join(dir, "session-1.jsonl"), "utf8").split("\n")
      expect(lines).toEqual([JSON.stringify(first), JSON.stringify(second), ""])
    }))

  it.scoped("creates the directory 0700 and the file 0600", () =>
    Effect.gen(function*() {
      const dir = NodePath.join(yield* tempDir, "nested", "sessions")
      yield* withJsonl(dir, Effect.flatMap(SessionPersistence, (p) => p.record(callRecord("call-1"))))
      expect(modeOf(dir)).toBe(0o700)
      expect(modeOf(NodePath.dirname(dir))).toBe(0o700)
      expect(modeOf(NodePath.join(dir, "session-1.jsonl"))).toBe(0o600)
    }))

  it.scoped("skips a torn last line, and a later append does not glue onto it", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const file = NodePath.join(dir, "session-1.jsonl")
      const first = callRecord("call-1")
      NodeFs.writeFileSync(file, `${JSON.stringify(first)}\n{"session":{"id":"sess`, { mode: 0o600 })

      const afterCrash = yield* withJsonl(dir, Effect.flatMap(SessionPersistence, (p) => p.replay(session)))
      expect(afterCrash).toEqual([first])

      const next = callRecord("call-2")
      const afterAppend = yield* withJsonl(
        dir,
        Effect.gen(function*() {
          const persistence = yield* SessionPersistence
          yield* persistence.record(next)
          return yield* persistence.replay(session)
        })
      )
      expect(afterAppend).toEqual([first, next])
    }))

  it.effect("serializes concurrent appends, even over a file system that writes in pieces", () =>
    Effect.gen(function*() {
      // Each append lands in two halves with a yield between, as a partial write would: without
      // serialization the halves of concurrent records interleave.
      const contents = new Map<string, string>()
      const append = (path: string, data: string) => Effect.sync(() => contents.set(path, (contents.get(path) ?? "") + data))
      const piecewise = FileSystem.layerNoop({
        makeDirectory: () => Effect.void,
        stat: (path) =>
          Effect.fail(new SystemError({ reason: "NotFound", module: "FileSystem", method: "stat", pathOrDescriptor: path })),
        writeFileString: (path, data) =>
          append(path, data.slice(0, data.length / 2)).pipe(
            Effect.zipRight(Effect.yieldNow()),
            Effect.zipRight(append(path, data.slice(data.length / 2)))
          ),
        readFileString: (path) => Effect.succeed(contents.get(path) ?? "")
      })
      const records = Array.from({ length: 20 }, (_, i) => callRecord(`call-${i}`, { text: `output of call ${i}` }))
      const replayed = yield* Effect.gen(function*() {
        const persistence = yield* SessionPersistence
        yield* Effect.forEach(records, (record) => persistence.record(record), { concurrency: "unbounded" })
        return yield* persistence.replay(session)
      }).pipe(
        Effect.provide(
          SessionPersistenceJsonl.layerWith({ directory: "/sessions" }).pipe(
            Layer.provide(Layer.merge(piecewise, NodePathLayer.layer))
          )
        )
      )
      const byCallId = (a: SessionPersistence.ToolCallRecord, b: SessionPersistence.ToolCallRecord) => a.callId.localeCompare(b.callId)
      expect([...replayed].sort(byCallId)).toEqual([...records].sort(byCallId))
    }))

  it.scoped("fails with SessionPersistenceError for an unserializable record or a session without id", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const errors = yield* withJsonl(
        dir,
        Effect.gen(function*() {
          const persistence = yield* SessionPersistence
          return [
            yield* Effect.flip(persistence.record(callRecord("call-big", { result: { size: 1n } }))),
            yield* Effect.flip(persistence.record(callRecord("call-anon", { session: { id: "" } })))
          ]
        })
      )
      expect(errors.map((error) => [error._tag, error.message])).toEqual([
        ["SessionPersistenceError", "cannot record tool call \"call-big\": not serializable"],
        ["SessionPersistenceError", "cannot record tool call \"call-anon\": the session has no id"]
      ])
      expect(NodeFs.readdirSync(dir)).toEqual([])
    }))
})

describe("SessionJsonlEnvContributor", () => {
  const call = (withSession: boolean) =>
    withSession ? { callId: "c", toolName: "bash", session } : { callId: "c", toolName: "bash" }

  const stack = (persistence: Layer.Layer<never>) =>
    SessionJsonlEnvContributor.layer.pipe(
      Layer.provideMerge(Layer.merge(BashEnvRegistryLive.layer({ dshHome: "/opt/dsh" }), persistence))
    )

  it.scoped("sets DSH_SESSION_JSONL to the located path, only for calls with a session", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const { declarations, with: withSession, without } = yield* Effect.gen(function*() {
        const registry = yield* BashEnvRegistry
        return {
          with: yield* registry.collect(call(true)),
          without: yield* registry.collect(call(false)),
          declarations: yield* registry.list
        }
      }).pipe(Effect.provide(stack(SessionPersistenceJsonl.layer({ directory: dir }))))
      expect(withSession.DSH_SESSION_JSONL).toBe(NodePath.join(dir, "session-1.jsonl"))
      expect(Object.keys(withSession)).toEqual(["DSH_HOME", "DSH_SESSION_ID", "DSH_SESSION_JSONL", "DSH_SHELL"])
      expect(Object.keys(without)).toEqual(["DSH_HOME", "DSH_SHELL"])
      expect(declarations).toEqual([{
        key: "DSH_SESSION_JSONL",
        contributor: "session-persistence",
        description: expect.stringMatching(/\S/)
      }])
    }))

  it.scoped("sets nothing when no persistence is composed", () =>
    Effect.gen(function*() {
      const registry = yield* BashEnvRegistry
      expect(Object.keys(yield* registry.collect(call(true)))).toEqual(["DSH_HOME", "DSH_SESSION_ID", "DSH_SHELL"])
    }).pipe(Effect.provide(stack(Layer.empty))))

  it.scoped("registers for the lifetime of the layer", () =>
    Effect.gen(function*() {
      const registry = yield* BashEnvRegistry
      const layerScope = yield* Scope.make()
      yield* Layer.buildWithScope(SessionJsonlEnvContributor.layer, layerScope)
      expect((yield* registry.list).map(({ contributor }) => contributor)).toEqual(["session-persistence"])
      yield* Scope.close(layerScope, Exit.void)
      expect(yield* registry.list).toEqual([])
    }).pipe(
      Effect.provide(BashEnvRegistryLive.layer({ dshHome: "/opt/dsh" }))
    ))
})
