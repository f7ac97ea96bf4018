/**
 * The MCP elicitation approval and the transport that holds the client's first message: outcomes,
 * the Clock's bound, the question's text, and what counts as declaring elicitation.
 */
import { describe, expect, it } from "@effect/vitest"
import type { Server } from "@modelcontextprotocol/sdk/server/index.js"
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js"
import type { ElicitRequestFormParams, ElicitResult, JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js"
import { Deferred, Effect, Fiber, TestClock } from "effect"
import { HeldTransport } from "../../src/cli/HeldTransport.js"
import * as McpApproval from "../../src/cli/mcpApproval.js"
import type { Approval } from "../../src/services/Approval.js"

const request: Approval.Request = {
  toolName: "bash",
  callId: "mcp-3",
  reason: "The build writes its output here.",
  command: "npm run build",
  mode: "workspace-write"
}

/** A server whose client answers each elicitation with `answer`; records the requests and pings. */
const fakeServer = (answer: (signal: AbortSignal | undefined) => Promise<ElicitResult>) => {
  const sent: Array<string> = []
  const asked: Array<ElicitRequestFormParams> = []
  const server = {
    ping: () => {
      sent.push("ping")
      return Promise.resolve({})
    },
    elicitInput: (params: ElicitRequestFormParams, options?: { signal?: AbortSignal; timeout?: number }) => {
      sent.push(`elicitation (SDK timeout ${options?.timeout})`)
      asked.push(params)
      return answer(options?.signal)
    }
  } as unknown as Server
  return { server, sent, asked }
}

describe("McpApproval", () => {
  it.effect("accept, decline and cancel map to allowed-once, rejected and cancelled; a failure to unavailable", () =>
    Effect.gen(function*() {
      const answers: Array<() => Promise<ElicitResult>> = [
        () => Promise.resolve({ action: "accept", content: {} }),
        () => Promise.resolve({ action: "decline" }),
        () => Promise.resolve({ action: "cancel" }),
        () => Promise.reject(new Error("Method not found"))
      ]
      const { asked, sent, server } = fakeServer(() => answers.shift()!())
      const approval = McpApproval.make(Effect.succeed(server), { timeoutMs: 60_000 })
      const outcomes: Array<Approval.Outcome> = []
      for (let i = 0; i < 4; i++) outcomes.push(yield* approval.request(request))
      expect(outcomes).toEqual(["allowed-once", "rejected", "cancelled", "unavailable"])
      // The first request of the connection is a ping: no elicitation has id 0.
      expect(sent).toEqual(["ping", ...Array(4).fill("elicitation (SDK timeout 61000)")])
      expect(asked[0]).toEqual({
        mode: "form",
        message: "Allow the bash tool to run this command once with the sandbox widened to \"workspace-write\"?\n\n" +
          "Command: npm run build\n" +
          "Justification (from the model): The build writes its output here.\n\n" +
          "Accept runs it once under \"workspace-write\"; decline leaves the sandbox as it is and the command does not run.",
        requestedSchema: { type: "object", properties: {} }
      })
    }))

  it.effect("no answer within the timeout (by the Clock) is cancelled, and the request's signal is aborted", () =>
    Effect.gen(function*() {
      const signals = yield* Deferred.make<AbortSignal>()
      const { server } = fakeServer((signal) => {
        Deferred.unsafeDone(signals, Effect.succeed(signal!))
        return new Promise<never>(() => {})
      })
      const approval = McpApproval.make(Effect.succeed(server), { timeoutMs: 5000 })
      const fiber = yield* Effect.fork(approval.request(request))
      const signal = yield* Deferred.await(signals)
      yield* TestClock.adjust(4999)
      expect(signal.aborted).toBe(false)
      expect(fiber.unsafePoll()).toBeNull()
      yield* TestClock.adjust(1)
      expect(yield* Fiber.join(fiber)).toBe("cancelled")
      expect(signal.aborted).toBe(true)
    }))

  it.effect("the timeout also bounds the wait for the server to connect", () =>
    Effect.gen(function*() {
      const approval = McpApproval.make(Effect.never, { timeoutMs: 1000 })
      const fiber = yield* Effect.fork(approval.request(request))
      yield* TestClock.adjust(1000)
      expect(yield* Fiber.join(fiber)).toBe("cancelled")
    }))

  it("elicitation is declared by an initialize whose capabilities name it (an empty object means a form)", () => {
    const initialize = (capabilities: Record<string, unknown>): JSONRPCMessage => ({
      jsonrpc: "2.0",
      id: 0,
      method: "initialize",
      params: { protocolVersion: "2025-06-18", capabilities, clientInfo: { name: "c", version: "0" } }
    })
    expect(McpApproval.declaresElicitation(initialize({ elicitation: {} }))).toBe(true)
    expect(McpApproval.declaresElicitation(initialize({ elicitation: { form: {} } }))).toBe(true)
    expect(McpApproval.declaresElicitation(initialize({ elicitation: { url: {} } }))).toBe(false)
    expect(McpApproval.declaresElicitation(initialize({ sampling: {} }))).toBe(false)
    expect(McpApproval.declaresElicitation({ jsonrpc: "2.0", id: 1, method: "tools/list" })).toBe(false)
    expect(McpApproval.declaresElicitation(undefined)).toBe(false)
  })
})

/** A transport the test drives: `emit` delivers what a client would send. */
const fakeInner = () => {
  const events: Array<string> = []
  const inner: Transport & { emit: (message: JSONRPCMessage) => void; end: () => void } = {
    start: async () => void events.push("inner started"),
    send: async (message) => void events.push(`sent ${JSON.stringify(message)}`),
    close: async () => void events.push("inner closed"),
    emit: (message) => inner.onmessage?.(message),
    end: () => inner.onclose?.()
  }
  return { inner, events }
}

describe("HeldTransport", () => {
  it.effect("starts its transport, yields the first message, and hands on everything held in order", () =>
    Effect.gen(function*() {
      const { events, inner } = fakeInner()
      const held = new HeldTransport(inner)
      const first = yield* Effect.fork(held.firstMessage)
      yield* Effect.yieldNow()
      expect(events).toEqual(["inner started"])
      inner.emit({ jsonrpc: "2.0", id: 1, method: "initialize" })
      inner.onerror?.(new Error("a malformed line"))
      inner.emit({ jsonrpc: "2.0", id: 2, method: "tools/list" })
      expect(yield* Fiber.join(first)).toEqual({ jsonrpc: "2.0", id: 1, method: "initialize" })
      const seen: Array<string> = []
      held.onmessage = (message) => void seen.push(JSON.stringify(message))
      held.onerror = (error) => void seen.push(error.message)
      held.onclose = () => void seen.push("closed")
      expect(seen).toEqual([])
      yield* Effect.promise(() => held.start())
      inner.emit({ jsonrpc: "2.0", id: 3, method: "ping" })
      inner.end()
      expect(seen).toEqual([
        "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\"}",
        "a malformed line",
        "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/list\"}",
        "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"ping\"}",
        "closed"
      ])
      yield* Effect.promise(() => held.send({ jsonrpc: "2.0", id: 1, result: {} }))
      yield* Effect.promise(() => held.close())
      expect(events.slice(1)).toEqual(["sent {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}", "inner closed"])
    }))

  it.effect("a close before any message ends the wait with none, and is handed on at start", () =>
    Effect.gen(function*() {
      const { inner } = fakeInner()
      const held = new HeldTransport(inner)
      const first = yield* Effect.fork(held.firstMessage)
      yield* Effect.yieldNow()
      inner.end()
      expect(yield* Fiber.join(first)).toBeUndefined()
      let closed = false
      held.onclose = () => void (closed = true)
      yield* Effect.promise(() => held.start())
      expect(closed).toBe(true)
    }))
})

describe("McpApproval for network names", () => {
  const networkRequest: Approval.NetworkRequest = {
    toolName: "bash",
    callId: "mcp-4",
    reason: "The package is only on the yarn registry.",
    command: "npm view left-pad version",
    names: ["registry.yarnpkg.com"]
  }

  it.effect("accept once or for the session, decline and cancel map to their outcomes; the form asks for the scope", () =>
    Effect.gen(function*() {
      const answers: Array<() => Promise<ElicitResult>> = [
        () => Promise.resolve({ action: "accept", content: { scope: "once" } }),
        () => Promise.resolve({ action: "accept", content: { scope: "session" } }),
        () => Promise.resolve({ action: "decline" }),
        () => Promise.resolve({ action: "cancel" }),
        () => Promise.reject(new Error("Method not found"))
      ]
      const { asked, server } = fakeServer(() => answers.shift()!())
      const approval = McpApproval.make(Effect.succeed(server), { timeoutMs: 60_000 })
      const outcomes: Array<Approval.NetworkOutcome> = []
      for (let i = 0; i < 5; i++) outcomes.push(yield* approval.requestNetwork!(networkRequest))
      expect(outcomes).toEqual(["allowed-once", "allowed-for-session", "rejected", "cancelled", "unavailable"])
      expect(asked[0]).toEqual({
        mode: "form",
        message: "Allow the bash tool's command to reach registry.yarnpkg.com beyond the network allow-list?\n\n" +
          "Command: npm view left-pad version\n" +
          "Justification (from the model): The package is only on the yarn registry.\n\n" +
          "Accept lets this command reach them (\"once\"), or every later command of the session too (\"session\"); " +
          "decline leaves the allow-list as it is and the command does not run.",
        requestedSchema: {
          type: "object",
          properties: { scope: { type: "string", title: "Allow for", enum: ["once", "session"], default: "once" } },
          required: ["scope"]
        }
      })
    }))
})
