import { describe, expect, it } from "@effect/vitest"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js"
import { CallToolResultSchema, EmptyResultSchema } from "@modelcontextprotocol/sdk/types.js"
import { Deferred, Effect, Exit, Fiber, Layer, Schema, Scope, TestClock } from "effect"
import { serveMcp } from "../../src/cli/mcpServer.js"
import { AgentTools } from "../../src/services/AgentTools.js"

const descriptor = (name: string, parameters: AgentTools.JsonSchema): AgentTools.Descriptor => ({
  name,
  description: `the ${name} tool`,
  parameters,
  success: Schema.Unknown,
  render: String,
  presentCall: () => ({ kind: "execute", title: name }),
  presentResult: () => ({ kind: "execute", title: name })
})

const echoSchema = {
  type: "object",
  properties: { text: { type: "string", description: "what to echo" } },
  required: ["text"]
} as const

/** A tiny AgentTools: each tool exercises one path of the server; `events` records what happened. */
const fakeTools = (events: Array<string>, aborted: Deferred.Deferred<void>) => {
  const ok = (text: string): AgentTools.Result => ({ isError: false, value: { text }, text })
  const error = (message: string): AgentTools.Result => ({ isError: true, message, text: `Error: ${message}` })
  const call = (name: string, args: unknown, ctx: AgentTools.CallContext): Effect.Effect<AgentTools.Result> => {
    switch (name) {
      case "echo":
        return Effect.succeed(ok((args as { text: string }).text))
      case "whoami":
        return Effect.succeed(ok(`${ctx.callId} ${ctx.session?.id} ${ctx.session?.cwd}`))
      case "fail":
        return Effect.succeed(error("invalid command: expected a non-empty string"))
      case "slow":
        return Effect.sleep(100).pipe(Effect.as(ok("slow done")))
      case "wait_abort":
        return Effect.sync(() => events.push("waiting")).pipe(
          Effect.andThen(Effect.never),
          Effect.onInterrupt(() =>
            Effect.sync(() => events.push("interrupted")).pipe(Effect.zipRight(Deferred.succeed(aborted, undefined)))
          )
        )
      case "forever":
        return Effect.sync(() => events.push("forever started")).pipe(
          Effect.andThen(Effect.never),
          Effect.onInterrupt(() => Effect.sync(() => events.push("forever interrupted")))
        )
      default:
        return Effect.succeed(error(`unknown tool ${name}`))
    }
  }
  return Layer.succeed(AgentTools, {
    tools: [descriptor("echo", echoSchema), descriptor("noargs", { type: "object", properties: {} })],
    promptSections: [
      { name: "second", order: 200, text: "Second section." },
      { name: "first", order: 105, text: "Check the [exit code: N] marker." }
    ],
    // The server gets tool names from the wire: it only ever uses `callUnknown`.
    call: () => Effect.die("the MCP server calls tools by wire name"),
    callUnknown: call,
    // A test pushes "notice pending" to have one notice for the fixed session, taken once.
    takeNotices: (owner) =>
      Effect.sync(() => {
        const pending = owner === "mcp" && events.includes("notice pending") && !events.includes("notice taken")
        if (pending) events.push("notice taken")
        return pending ? [notice] : []
      })
  })
}

const session = { id: "mcp", cwd: "/work/somewhere" }
const notice = "background task bash-1 (bash: sleep 1) finished [status: completed, exit code: 0]. Read its output with task_output."

/** Serves the fake tools in `scope` and connects an SDK client to them in memory. */
const connect = (scope: Scope.Scope, events: Array<string> = [], drainTimeout = 1000) =>
  Effect.gen(function*() {
    const aborted = yield* Deferred.make<void>()
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair()
    const connection = yield* serveMcp(serverSide, { session, drainTimeout }).pipe(
      Effect.provide(fakeTools(events, aborted)),
      Scope.extend(scope)
    )
    const client = new Client({ name: "test", version: "0.0.0" })
    yield* Effect.promise(() => client.connect(clientSide))
    return { client, aborted, connection }
  })

describe("serveMcp (fake AgentTools, in-memory transport)", () => {
  it.scopedLive("lists the tools with their JSON Schemas, and a parameterless tool as { type: object }", () =>
    Effect.gen(function*() {
      const { client } = yield* connect(yield* Effect.scope)
      const { tools } = yield* Effect.promise(() => client.listTools())
      expect(tools).toEqual([
        { name: "echo", description: "the echo tool", inputSchema: echoSchema },
        { name: "noargs", description: "the noargs tool", inputSchema: { type: "object", properties: {} } }
      ])
    }))

  it.scopedLive("publishes the prompt sections, in order, as the server's instructions", () =>
    Effect.gen(function*() {
      const { client } = yield* connect(yield* Effect.scope)
      expect(client.getInstructions()).toBe("Check the [exit code: N] marker.\n\nSecond section.")
    }))

  it.scopedLive("appends the session's pending completion notices, once, as text items after the result", () =>
    Effect.gen(function*() {
      const { client } = yield* connect(yield* Effect.scope, ["notice pending"])
      const first = yield* Effect.promise(() => client.callTool({ name: "echo", arguments: { text: "a" } }))
      expect(first).toEqual({ content: [{ type: "text", text: "a" }, { type: "text", text: notice }] })
      const second = yield* Effect.promise(() => client.callTool({ name: "echo", arguments: { text: "b" } }))
      expect(second).toEqual({ content: [{ type: "text", text: "b" }] })
    }))

  it.scopedLive("returns a result as plain text, run in the fixed session with the request id in the callId", () =>
    Effect.gen(function*() {
      const { client } = yield* connect(yield* Effect.scope)
      const echoed = yield* Effect.promise(() => client.callTool({ name: "echo", arguments: { text: "hi\nthere\n" } }))
      expect(echoed).toEqual({ content: [{ type: "text", text: "hi\nthere\n" }] })
      const who = yield* Effect.promise(() => client.callTool({ name: "whoami", arguments: {} }))
      expect(who.content).toEqual([{ type: "text", text: expect.stringMatching(/^mcp-\d+ mcp \/work\/somewhere$/) }])
    }))

  it.scopedLive("returns a tool error as isError with the exact message", () =>
    Effect.gen(function*() {
      const { client } = yield* connect(yield* Effect.scope)
      const failed = yield* Effect.promise(() => client.callTool({ name: "fail", arguments: {} }))
      expect(failed).toEqual({
        content: [{ type: "text", text: "invalid command: expected a non-empty string" }],
        isError: true
      })
      const unknown = yield* Effect.promise(() => client.callTool({ name: "nope", arguments: {} }))
      expect(unknown).toEqual({ content: [{ type: "text", text: "unknown tool nope" }], isError: true })
    }))

  it.scopedLive("a cancelled request interrupts the call", () =>
    Effect.gen(function*() {
      const events: Array<string> = []
      const { aborted, client } = yield* connect(yield* Effect.scope, events)
      const controller = new AbortController()
      const pending = client.callTool({ name: "wait_abort", arguments: {} }, undefined, { signal: controller.signal })
      pending.catch(() => undefined)
      yield* Effect.promise(() => waitUntil(() => events.includes("waiting")))
      controller.abort("user pressed stop")
      yield* Deferred.await(aborted).pipe(Effect.timeout(5000))
      expect(events).toEqual(["waiting", "interrupted"])
    }))

  it.scopedLive("answers an unknown method with -32601", () =>
    Effect.gen(function*() {
      const { client } = yield* connect(yield* Effect.scope)
      const error = yield* Effect.flip(
        Effect.tryPromise(() => client.request({ method: "no/such/method" }, EmptyResultSchema))
      )
      expect(error.cause).toMatchObject({ code: -32601 })
    }))

  it.scopedLive("answers a tools/call with invalid params with -32602 and our message, and keeps serving", () =>
    Effect.gen(function*() {
      const { client } = yield* connect(yield* Effect.scope)
      // The client's McpError prefixes the wire message with "MCP error <code>: ".
      const rejected = (params: Record<string, unknown>) =>
        Effect.flip(Effect.tryPromise(() => client.request({ method: "tools/call", params }, CallToolResultSchema))).pipe(
          Effect.map((error) => error.cause)
        )
      expect(yield* rejected({ name: "echo", arguments: "text" })).toMatchObject({
        code: -32602,
        message: "MCP error -32602: invalid arguments: expected an object, got \"text\""
      })
      expect(yield* rejected({ name: "echo", arguments: [1] })).toMatchObject({
        code: -32602,
        message: "MCP error -32602: invalid arguments: expected an object, got [1]"
      })
      expect(yield* rejected({ arguments: {} })).toMatchObject({
        code: -32602,
        message: "MCP error -32602: invalid name: expected a non-empty string, got undefined"
      })
      expect(yield* rejected({ name: 42 })).toMatchObject({
        code: -32602,
        message: "MCP error -32602: invalid name: expected a non-empty string, got 42"
      })
      const echoed = yield* Effect.promise(() => client.callTool({ name: "echo", arguments: { text: "still here" } }))
      expect(echoed).toEqual({ content: [{ type: "text", text: "still here" }] })
    }))

  it.live("the connection reports when its transport has closed", () =>
    Effect.gen(function*() {
      const scope = yield* Scope.make()
      const { client, connection } = yield* connect(scope)
      const closed = yield* Effect.fork(connection.closed)
      yield* Effect.promise(() => client.close())
      yield* Fiber.join(closed).pipe(Effect.timeout(5000))
      yield* Scope.close(scope, Exit.void)
    }))

  it.live("closing answers calls that finish within the drain timeout, then interrupts the rest", () =>
    Effect.gen(function*() {
      const events: Array<string> = []
      const scope = yield* Scope.make()
      const { client } = yield* connect(scope, events, 300)
      const slow = client.callTool({ name: "slow", arguments: {} })
      const forever = client.callTool({ name: "forever", arguments: {} })
      forever.catch(() => undefined)
      yield* Effect.promise(() => waitUntil(() => events.includes("forever started")))
      const started = Date.now()
      yield* Scope.close(scope, Exit.void)
      const closedAfterMs = Date.now() - started
      expect(yield* Effect.promise(() => slow)).toEqual({ content: [{ type: "text", text: "slow done" }] })
      expect(events).toEqual(["forever started", "forever interrupted"])
      expect(closedAfterMs).toBeGreaterThanOrEqual(250)
      expect(closedAfterMs).toBeLessThan(2000)
    }))

  it.effect("an interruption of the closing fiber during the drain (a SIGTERM) still answers each call left `command aborted`", () =>
    Effect.gen(function*() {
      const events: Array<string> = []
      const scope = yield* Scope.make()
      const { client } = yield* connect(scope, events, 300)
      const forever = client.callTool({ name: "forever", arguments: {} })
      forever.catch(() => undefined)
      yield* Effect.promise(() => waitUntil(() => events.includes("forever started")))
      const closing = yield* Effect.fork(Scope.close(scope, Exit.void))
      // The close is waiting for the call (its drain, on the TestClock) when the runtime interrupts it.
      yield* Effect.yieldNow()
      yield* Fiber.interruptFork(closing)
      yield* TestClock.adjust(300)
      // Bounded in real time (the TestClock drives the drain): a call left unanswered shows as such.
      const answer = Promise.race([forever, new Promise((resolve) => setTimeout(() => resolve("no answer"), 5000))])
      expect(yield* Effect.promise(() => answer)).toEqual({ content: [{ type: "text", text: "command aborted" }], isError: true })
      yield* TestClock.adjust(300)
      yield* Fiber.await(closing)
    }))
})

/** Polls a condition set by a callback on another side of a transport (bounded). */
const waitUntil = async (condition: () => boolean, timeoutMs = 5000) => {
  const deadline = Date.now() + timeoutMs
  while (!condition()) {
    if (Date.now() > deadline) throw new Error("condition not met in time")
    await new Promise((resolve) => setTimeout(resolve, 5))
  }
}
