/**
 * Per-session sandbox modes: an override applies to that session's next call only, escalation
 * starts from it, and the policy text is the reference's.
 */
import { describe, expect, it } from "@effect/vitest"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js"
import { serveMcp } from "../../src/cli/mcpServer.js"
import { Effect, Layer, Option } from "effect"
import * as ApprovalScripted from "../../src/testing/ApprovalScripted.js"
import * as FakeConfiningExecutor from "../../src/testing/FakeConfiningExecutor.js"
import * as ScriptedBashExecutor from "../../src/testing/ScriptedBashExecutor.js"
import * as SandboxSessionsLive from "../../src/layers/SandboxSessionsLive.js"
import { SandboxSessions } from "../../src/services/SandboxSessions.js"
import { composeWith, textOf, withTasks } from "../support/tools.js"

const workspace = "/work/space"
const a = { id: "s-a", cwd: workspace }
const b = { id: "s-b", cwd: workspace }
const write = { command: "echo x > notes.txt", description: "Write a note here" }

const confined = composeWith({
  executor: Layer.provideMerge(
    SandboxSessionsLive.layer,
    FakeConfiningExecutor.layer({ sandboxMode: "read-only", workspaceRoot: workspace, cwd: workspace })
  ),
  services: withTasks(ApprovalScripted.layer([]))
})

const modesRun = Effect.flatMap(FakeConfiningExecutor.FakeConfiningExecutor, (executor) => executor.calls).pipe(
  Effect.map((calls) => calls.map((call) => call.spec.sandboxPolicy?.mode))
)

describe("SandboxSessions", () => {
  it.effect("an override applies from the session's next call, to that session only, until cleared", () =>
    Effect.gen(function*() {
      const sessions = yield* SandboxSessions
      yield* textOf("bash", write, { session: a })
      yield* sessions.setMode(a.id, "workspace-write")
      expect(yield* sessions.modeOf(a.id)).toEqual(Option.some("workspace-write"))
      expect(yield* sessions.modeOf(b.id)).toEqual(Option.none())
      expect(yield* textOf("bash", write, { session: a })).toBe("(no output)")
      expect(yield* textOf("bash", write, { session: b })).toContain("[sandbox: file access denied under read-only mode]")
      yield* sessions.setMode(a.id, undefined)
      yield* textOf("bash", write, { session: a })
      expect(yield* modesRun).toEqual(["read-only", "workspace-write", "read-only", "read-only"])
    }).pipe(Effect.provide(confined)))

  it.effect("escalation is judged against the session's override", () =>
    Effect.gen(function*() {
      yield* (yield* SandboxSessions).setMode(a.id, "workspace-write")
      const retry = { ...write, sandbox_permissions: "workspace-write", justification: "It must write here." }
      expect(yield* textOf("bash", retry, { session: a })).toBe(
        "Error: sandbox escalation to \"workspace-write\" is not strictly wider than this call's current \"workspace-write\" mode"
      )
    }).pipe(Effect.provide(confined)))

  it.effect("the policy text of each mode, exactly", () =>
    Effect.gen(function*() {
      const sessions = yield* SandboxSessions
      expect(sessions.policyText(a)).toBe(
        "Current DSH file policy: read-only. Any available operation enforced by the DSH file sandbox cannot modify files in the standing mode. Do not refuse a required modification from this policy alone: try an available tool normally and follow any denial and escalation guidance it returns."
      )
      yield* sessions.setMode(a.id, "workspace-write")
      expect(sessions.policyText(a)).toBe(
        "Current DSH file policy: workspace-write. Any available operation enforced by the DSH file sandbox may modify files under the session workspace: \"/work/space\". Some platform temporary areas may also be writable."
      )
      yield* sessions.setMode(a.id, "danger-full-access")
      expect(sessions.policyText(a)).toBe(
        "Current DSH file policy: danger-full-access. The DSH file sandbox does not restrict file modifications by available operations."
      )
    }).pipe(Effect.provide(confined)))

  it.effect("an unconfined executor has no policy and ignores overrides", () =>
    Effect.gen(function*() {
      const sessions = yield* SandboxSessions
      yield* sessions.setMode(a.id, "read-only")
      expect(sessions.policyText(a)).toBeUndefined()
      expect(yield* sessions.standingMode(a.id)).toBeUndefined()
    }).pipe(Effect.provide(Layer.provideMerge(SandboxSessionsLive.layer, ScriptedBashExecutor.layer()))))
})

describe("the MCP server's instructions", () => {
  it.scopedLive("carry the sandbox policy of the connection's session after the tool sections", () =>
    Effect.gen(function*() {
      const [clientSide, serverSide] = InMemoryTransport.createLinkedPair()
      yield* serveMcp(serverSide, { session: { id: "mcp", cwd: workspace }, drainTimeout: 100 }).pipe(Effect.provide(confined))
      const client = new Client({ name: "test", version: "0.0.0" })
      yield* Effect.acquireRelease(Effect.promise(() => client.connect(clientSide)), () => Effect.promise(() => client.close()))
      const instructions = client.getInstructions() ?? ""
      expect(instructions.split("\n\n").at(-1)).toBe(
        "Current DSH file policy: read-only. Any available operation enforced by the DSH file sandbox cannot modify files in the standing mode. Do not refuse a required modification from this policy alone: try an available tool normally and follow any denial and escalation guidance it returns."
      )
      expect(instructions).toMatch(/^Every bash result/)
    }))

  it.scopedLive("say what the policy's \"DSH file sandbox\" is, just before the policy", () =>
    Effect.gen(function*() {
      const [clientSide, serverSide] = InMemoryTransport.createLinkedPair()
      yield* serveMcp(serverSide, { session: { id: "mcp", cwd: workspace }, drainTimeout: 100 }).pipe(Effect.provide(confined))
      const client = new Client({ name: "test", version: "0.0.0" })
      yield* Effect.acquireRelease(Effect.promise(() => client.connect(clientSide)), () => Effect.promise(() => client.close()))
      expect((client.getInstructions() ?? "").split("\n\n").at(-2)).toBe(
        "In this server, the DSH file sandbox is effect-bash's bubblewrap sandbox around the commands of the bash tool, and the DSH file policy is the mode it enforces on the files they may modify."
      )
    }))
})
