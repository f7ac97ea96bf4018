/**
 * Reliability through MCP: a seeded fuzz of tools/call requests from the official SDK client (the
 * in-process server over the scripted executor, answers compared with `AgentTools.call` on the same
 * arguments), and raw malformed JSON-RPC lines against a real `effect-bash mcp` process. Every
 * request with an id is answered and the server stays up.
 */
import { describe, expect, it } from "@effect/vitest"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js"
import { CallToolResultSchema } from "@modelcontextprotocol/sdk/types.js"
import { Effect } from "effect"
import { spawn } from "node:child_process"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll } from "vitest"
import { serveMcp } from "../src/cli/mcpServer.js"
import * as ScriptedBashExecutor from "../src/testing/ScriptedBashExecutor.js"
import { AgentTools } from "../src/services/AgentTools.js"
import { cleanEnv, cliPath, eventually } from "./cli-support.js"
import { fuzzArguments, fuzzSeed, hostileString, hostileValue, makeRng } from "./support/fuzz.js"
import type { Rng } from "./support/fuzz.js"
import { compose } from "./tool-support.js"

const cwd = mkdtempSync(join(tmpdir(), "effect-bash-mcp-fuzz-"))
afterAll(() => rmSync(cwd, { recursive: true, force: true }))

const requests = 1_000
const seed = fuzzSeed(1_130)

const bases: Record<string, Readonly<Record<string, unknown>>> = {
  bash: { command: "echo hi", description: "print a greeting", timeoutMs: 5_000, run_in_background: false },
  task_output: { task_id: "bash-1", wait: false },
  task_kill: { task_id: "bash-1" },
  task_list: {}
}

/** What the client sends: a JSON value (the wire has no undefined, NaN or -0). */
const asJson = (value: unknown): unknown => {
  const text = JSON.stringify(value)
  return text === undefined ? undefined : JSON.parse(text)
}

/** `params` of one tools/call: usually `{ name, arguments }`, sometimes broken. */
const fuzzParams = (rng: Rng): unknown => {
  const name = rng.chance(0.9) ? rng.pick(Object.keys(bases)) : hostileString(rng).slice(0, 16)
  const args = fuzzArguments(rng, bases[name] ?? {})
  try {
    if (rng.chance(0.05)) return asJson(hostileValue(rng, 1)) ?? null
    const params: Record<string, unknown> = { name, arguments: args }
    if (rng.chance(0.04)) delete params["name"]
    if (rng.chance(0.04)) params["name"] = hostileValue(rng, 1)
    return asJson(params)
  } catch {
    return { name: "task_list", arguments: {} } // too deep for JSON: the client could not send it either
  }
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

/** The JSON-RPC error the params deserve when they are not a valid tools/call. */
const invalidParams = (params: unknown): { code: number; message: string } | undefined => {
  // Messages echo at most 200 characters of a value, then `…`.
  const shown = (value: unknown) => {
    const text = JSON.stringify(value) ?? String(value)
    return text.length > 200 ? `${text.slice(0, 200)}…` : text
  }
  // JSON-RPC: params, when present, are structured (MCP: an object); else the request itself is invalid.
  if (params !== undefined && !isRecord(params)) return { code: -32600, message: `Invalid Request: "params" must be an object` }
  const error = invalidToolCall(params, shown)
  return error === undefined ? undefined : { code: -32602, message: error }
}

const invalidToolCall = (params: unknown, shown: (value: unknown) => string): string | undefined => {
  if (!isRecord(params)) return `invalid params: expected an object, got ${shown(params)}`
  if (typeof params["name"] !== "string" || params["name"] === "") {
    return `invalid name: expected a non-empty string, got ${shown(params["name"])}`
  }
  const args = params["arguments"]
  if (args !== undefined && !isRecord(args)) return `invalid arguments: expected an object, got ${shown(args)}`
  return undefined
}

const textOf = (content: ReadonlyArray<{ type: string; text?: string }>) => content.map((part) => part.text).join("\n")
// Each call starts its own background task, so the ids differ between the two paths.
const sameTaskIds = (text: string) => text.replace(/bash-\d+/g, "bash-N")

describe(`reliability through MCP (seed ${seed})`, () => {
  it.scopedLive(`${requests} fuzzed tools/call requests from the SDK client: each answered as AgentTools.call answers`, () =>
    Effect.gen(function*() {
      const tools = yield* AgentTools
      const [clientSide, serverSide] = InMemoryTransport.createLinkedPair()
      yield* serveMcp(serverSide, { session: { id: "mcp", cwd }, drainTimeout: 1_000 })
      const client = new Client({ name: "fuzz", version: "0" })
      yield* Effect.promise(() => client.connect(clientSide))
      const rng = makeRng(seed)
      let protocolErrors = 0
      for (let index = 0; index < requests; index++) {
        const params = fuzzParams(rng)
        const context = `seed ${seed}, request ${index}: ${JSON.stringify(params)?.slice(0, 300)}`
        const answer = yield* Effect.promise(() =>
          client.request({ method: "tools/call", params: params as never }, CallToolResultSchema).then(
            (result) => ({ result }),
            (error: { code?: number; message: string }) => ({ error })
          )
        )
        const expectedError = invalidParams(params)
        if (expectedError !== undefined) {
          expect("error" in answer ? answer.error : answer, context).toMatchObject({
            code: expectedError.code,
            message: `MCP error ${expectedError.code}: ${expectedError.message}`
          })
          protocolErrors++
          continue
        }
        if (!("result" in answer)) return expect.fail(`${context}\nanswered with an error: ${answer.error.message}`)
        const { arguments: args, name } = params as { name: string; arguments?: unknown }
        const direct = yield* tools.callUnknown(name, args ?? {}, { callId: `direct-${index}`, session: { id: "direct", cwd } })
        expect(answer.result.isError === true, context).toBe(direct.isError)
        const text = textOf(answer.result.content as never)
        expect(sameTaskIds(text), context).toBe(sameTaskIds(direct.isError ? direct.message : direct.text))
      }
      expect(protocolErrors).toBeGreaterThan(20)
      // Still serving.
      const listed = yield* Effect.promise(() => client.listTools())
      expect(listed.tools.map((tool) => tool.name)).toEqual(["bash", "task_output", "task_list", "task_kill"])
    }).pipe(Effect.provide(compose({ executor: ScriptedBashExecutor.layer({ cwd }), enableRunInBackground: true }))))

  it.live("raw malformed JSON-RPC lines to a real server: every request with an id is answered, the server stays up", () =>
    Effect.promise(async () => {
      const server = spawn(process.execPath, [cliPath, "mcp", "--workdir", cwd], {
        env: cleanEnv(),
        stdio: ["pipe", "pipe", "pipe"]
      })
      const answers: Array<Record<string, unknown>> = []
      let buffer = ""
      server.stdout.setEncoding("utf8").on("data", (chunk: string) => {
        buffer += chunk
        const lines = buffer.split("\n")
        buffer = lines.pop() ?? ""
        for (const line of lines) answers.push(JSON.parse(line) as Record<string, unknown>)
      })
      server.stderr.resume()
      server.stdin.on("error", () => undefined)
      const exited = new Promise<number | null>((resolve) => server.on("close", resolve))
      const line = (text: string) => server.stdin.write(`${text}\n`)
      const request = (id: unknown, method: string, params?: unknown) =>
        line(JSON.stringify({ jsonrpc: "2.0", id, method, ...(params === undefined ? {} : { params }) }))
      try {
        request(0, "initialize", { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "0" } })
        line(JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }))
        // Lines that are not JSON, or not an object: each answered with id null.
        const nullAnswers = ["garbage", "{", `{"jsonrpc":"2.0","id":1,"method":"ping"`, "[]", "42", `"text"`, "null", "\u0000\u0001"]
        nullAnswers.forEach(line)
        // Invalid requests whose id can be read: each answered with -32600 and that id.
        line(`{"jsonrpc":"1.0","id":"v1","method":"ping"}`)
        line(`{"id":"no-version","method":"ping"}`)
        line(`{"jsonrpc":"2.0","id":"bad-method","method":42}`)
        line(`{"jsonrpc":"2.0","id":"bad-params","method":"ping","params":"x"}`)
        line(`{"jsonrpc":"2.0","id":"extra-key","method":"ping","extra":1}`)
        // A batch: each request in it answered as invalid.
        line(`[{"jsonrpc":"2.0","id":"batch-1","method":"ping"},{"jsonrpc":"2.0","id":"batch-2","method":"ping"}]`)
        // Odd but valid ids, and tools/call with invalid params: answered normally / with -32602.
        request(9007199254740991, "ping")
        request(-1, "ping")
        request("x".repeat(10_000), "ping")
        request("call-string-args", "tools/call", { name: "bash", arguments: "echo hi" })
        request("call-no-name", "tools/call", { arguments: {} })
        request("call-null-params", "tools/call", null)
        // A response nobody asked for and an unknown notification: no answer, no harm.
        line(`{"jsonrpc":"2.0","id":99,"result":{}}`)
        line(`{"jsonrpc":"2.0","method":"notifications/unknown"}`)
        // A fuzzed tail of requests with ids.
        const rng = makeRng(seed)
        const fuzzed = Array.from({ length: 200 }, (_, index) => `fuzz-${index}`)
        for (const id of fuzzed) {
          const method = rng.pick(["ping", "tools/list", "tools/call", "nope/nope", hostileString(rng).slice(0, 10)])
          request(id, method, rng.chance(0.7) ? asJsonOrNull(hostileValue(rng, 2)) : undefined)
        }
        request("last", "ping")
        const answeredIds = () => new Set(answers.map((answer) => answer.id))
        const expectedIds = [
          0, "v1", "no-version", "bad-method", "bad-params", "extra-key", "batch-1", "batch-2",
          9007199254740991, -1, "x".repeat(10_000), "call-string-args", "call-no-name", "call-null-params", ...fuzzed, "last"
        ]
        expect(await eventually(() => expectedIds.every((id) => answeredIds().has(id)), 30_000)).toBe(true)
        const byId = (id: unknown) => answers.filter((answer) => answer.id === id)
        for (const id of expectedIds) expect(byId(id), `answers to ${String(id).slice(0, 20)}`).toHaveLength(1)
        expect(byId(null)).toHaveLength(nullAnswers.length)
        expect(byId(null).map((answer) => (answer.error as { code: number }).code)).toEqual([
          -32700, -32700, -32700, -32600, -32600, -32600, -32600, -32700
        ])
        for (const id of ["v1", "no-version", "bad-method", "bad-params", "extra-key", "batch-1", "batch-2"]) {
          expect(byId(id)[0], String(id)).toMatchObject({ error: { code: -32600 } })
        }
        expect(byId("call-string-args")[0]).toEqual({
          jsonrpc: "2.0",
          id: "call-string-args",
          error: { code: -32602, message: "invalid arguments: expected an object, got \"echo hi\"" }
        })
        expect(byId("call-no-name")[0]).toMatchObject({ error: { code: -32602, message: "invalid name: expected a non-empty string, got undefined" } })
        expect(byId("call-null-params")[0]).toMatchObject({ error: { code: -32600, message: "Invalid Request: \"params\" must be an object" } })
        expect(byId(99)).toEqual([])
        expect(byId("last")[0]).toEqual({ jsonrpc: "2.0", id: "last", result: {} })
        // No answer is an internal error.
        expect(answers.filter((answer) => (answer.error as { code?: number } | undefined)?.code === -32603)).toEqual([])
        server.stdin.end()
        expect(await Promise.race([exited, new Promise((resolve) => setTimeout(() => resolve("still running"), 10_000))])).toBe(0)
      } finally {
        server.kill("SIGKILL")
      }
    }))
})

const asJsonOrNull = (value: unknown): unknown => {
  try {
    return JSON.parse(JSON.stringify(value) ?? "null")
  } catch {
    return null
  }
}
