/**
 * Reliability through MCP: a seeded fuzz of tools/call requests from the official SDK client to the
 * in-process server over the scripted executor, answers compared with `AgentTools.call` on the same
 * arguments. Every request with an id is answered. Raw malformed lines against a real
 * `effect-bash mcp` process are in test/process/mcp-process-survives-malformed-lines.test.ts.
 */
import { describe, expect, it } from "@effect/vitest"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js"
import { CallToolResultSchema } from "@modelcontextprotocol/sdk/types.js"
import { Effect } from "effect"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll } from "vitest"
import { serveMcp } from "../../src/cli/mcpServer.js"
import * as ScriptedBashExecutor from "../../src/testing/ScriptedBashExecutor.js"
import { AgentTools } from "../../src/services/AgentTools.js"
import { fuzzArguments, fuzzSeed, hostileString, hostileValue, makeRng } from "../support/fuzz.js"
import type { Rng } from "../support/fuzz.js"
import { compose } from "../support/tools.js"

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
})
