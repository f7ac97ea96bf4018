/**
 * Reliability through MCP against a real `effect-bash mcp` process: raw malformed JSON-RPC lines and a
 * seeded fuzzed tail. Every request with an id is answered and the server stays up.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { spawn } from "node:child_process"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll } from "vitest"
import { cleanEnv, cliPath, eventually } from "../support/cli.js"
import { fuzzSeed, hostileString, hostileValue, makeRng } from "../support/fuzz.js"

const cwd = mkdtempSync(join(tmpdir(), "effect-bash-mcp-raw-"))
afterAll(() => rmSync(cwd, { recursive: true, force: true }))

const seed = fuzzSeed(1_130)

describe(`reliability through MCP, a real server (seed ${seed})`, () => {
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
        // Each id's answer is then checked by name: a missing one fails below, naming the id.
        await eventually(() => expectedIds.every((id) => answeredIds().has(id)), 30_000)
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
