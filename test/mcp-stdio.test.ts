import { describe, expect, it } from "@effect/vitest"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js"
import { Effect, Fiber } from "effect"
import { spawn } from "node:child_process"
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll } from "vitest"
import { cleanEnv, cliPath, descendantsOf, eventually, isAlive, membersOfGroups } from "./cli-support.js"

const workdir = mkdtempSync(join(tmpdir(), "effect-bash-mcp-"))
afterAll(() => rmSync(workdir, { recursive: true, force: true }))

const description = "A test command for the MCP server"

/** Starts `effect-bash mcp` as a real stdio subprocess and connects the official SDK client. */
const connectWith = (...flags: Array<string>) => Effect.promise(async () => {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [cliPath, "mcp", "--workdir", workdir, ...flags],
    env: cleanEnv({ EFFECT_BASH_GRACE_MS: "300" }),
    stderr: "pipe"
  })
  const client = new Client({ name: "mcp-stdio-test", version: "0.0.0" })
  await client.connect(transport)
  const pid = transport.pid
  if (pid === null) throw new Error("the server did not start")
  return { client, pid }
})
const connectUnmanaged = connectWith()

/** A connection closed with the test's scope. */
const connect = Effect.acquireRelease(connectUnmanaged, ({ client }) => Effect.promise(() => client.close()))
const closeClient = ({ client }: { readonly client: Client }) => Effect.promise(() => client.close())

const text = (client: Client, name: string, args: Record<string, unknown>) =>
  Effect.promise(async () => {
    const result = await client.callTool({ name, arguments: args })
    const content = result.content as Array<{ type: string; text: string }>
    return { isError: result.isError === true, text: content.map((part) => part.text).join("") }
  })

const bash = (client: Client, command: string, extra: Record<string, unknown> = {}) =>
  text(client, "bash", { command, description, ...extra })

/** The pid a command wrote (`echo $$ > <name>` in the workdir), once the line is complete. */
const pidFrom = (name: string) =>
  Effect.promise(async () => {
    const file = join(workdir, name)
    const written = await eventually(() => existsSync(file) && readFileSync(file, "utf8").endsWith("\n"))
    if (!written) throw new Error(`${name} was not written in time`)
    return Number(readFileSync(file, "utf8"))
  })

/** Waits (bounded) until process group `pgid` has exactly `count` live members. */
const groupHas = (pgid: number, count: number) =>
  Effect.promise(() => eventually(() => membersOfGroups([pgid]).length === count))

describe("effect-bash mcp over stdio (official SDK client, real processes)", () => {
  it.scopedLive("lists bash, task_output, task_list and task_kill with their JSON Schemas", () =>
    Effect.gen(function*() {
      const { client } = yield* connect
      const { tools } = yield* Effect.promise(() => client.listTools())
      expect(tools.map((tool) => tool.name)).toEqual(["bash", "task_output", "task_list", "task_kill"])
      for (const tool of tools) expect(tool.inputSchema.type).toBe("object")
      const [bashTool] = tools
      expect(Object.keys(bashTool?.inputSchema.properties ?? {})).toEqual(
        expect.arrayContaining(["command", "description", "timeoutMs", "workdir", "run_in_background"])
      )
      expect(bashTool?.inputSchema.required).toEqual(["command", "description"])
      expect(tools[2]?.inputSchema).toMatchObject({ type: "object" })
    }))

  it.scopedLive("--no-background drops run_in_background from the bash tool", () =>
    Effect.gen(function*() {
      const { client } = yield* Effect.acquireRelease(connectWith("--no-background"), closeClient)
      const { tools } = yield* Effect.promise(() => client.listTools())
      expect(Object.keys(tools[0]?.inputSchema.properties ?? {})).not.toContain("run_in_background")
    }))

  it.scopedLive("runs ok, failing and timed-out commands, answering with the model-facing text", () =>
    Effect.gen(function*() {
      const { client } = yield* connect
      expect(yield* bash(client, "echo hello; pwd")).toEqual({ isError: false, text: `hello\n${workdir}\n` })
      expect(yield* bash(client, "echo failing; exit 3")).toEqual({ isError: false, text: "failing\n[exit code: 3]" })
      expect(yield* bash(client, "sleep 5", { timeoutMs: 200 })).toEqual({
        isError: false,
        text: "(no output)\n[timed out after 200ms]\n[killed by signal: SIGTERM]"
      })
    }))

  it.scopedLive("answers invalid arguments with isError and the exact message", () =>
    Effect.gen(function*() {
      const { client } = yield* connect
      expect(yield* bash(client, "")).toEqual({ isError: true, text: "invalid command: expected a non-empty string" })
      expect(yield* bash(client, "true", { timeoutMs: -1 })).toEqual({
        isError: true,
        text: "invalid timeoutMs: expected a positive number, got -1"
      })
      expect(yield* text(client, "task_output", { task_id: "" })).toEqual({
        isError: true,
        text: "invalid task_id: expected a non-empty string, got \"\""
      })
    }))

  it.scopedLive("starts a background task, reads it with task_output wait, kills it with task_kill", () =>
    Effect.gen(function*() {
      const { client } = yield* connect
      const command = "echo $$ > background.pid; echo started; sleep 30"
      expect(yield* bash(client, command, { run_in_background: true })).toEqual({
        isError: false,
        text: "started background task bash-1"
      })
      const shell = yield* pidFrom("background.pid")
      expect(isAlive(shell)).toBe(true)
      const first = yield* text(client, "task_output", { task_id: "bash-1", wait: true, timeout_ms: 500 })
      expect(first).toEqual({ isError: false, text: "started\n[status: running]" })
      expect(yield* text(client, "task_list", {})).toEqual({
        isError: false,
        text: `bash-1 [bash] running — ${command}`
      })
      expect(yield* text(client, "task_kill", { task_id: "bash-1" })).toEqual({
        isError: false,
        text: "requested cancellation of task bash-1"
      })
      const last = yield* text(client, "task_output", { task_id: "bash-1", wait: true, timeout_ms: 5000 })
      expect(last).toEqual({ isError: false, text: "(no new output)\n[status: killed, signal: SIGTERM]" })
      expect(membersOfGroups([shell])).toEqual([])
    }))

  it.scopedLive("a cancelled request kills the command's process group", () =>
    Effect.gen(function*() {
      const { client } = yield* connect
      const controller = new AbortController()
      const pending = client.callTool(
        { name: "bash", arguments: { command: "echo $$ > cancelled.pid; sleep 30 & wait", description } },
        undefined,
        { signal: controller.signal }
      )
      pending.catch(() => undefined)
      const shell = yield* pidFrom("cancelled.pid")
      // The pid is written before `sleep 30 &` forks: wait for both members.
      expect(yield* groupHas(shell, 2)).toBe(true)
      controller.abort("stop")
      expect(yield* Effect.promise(() => eventually(() => membersOfGroups([shell]).length === 0))).toBe(true)
      // The server stays usable after a cancellation.
      expect(yield* bash(client, "echo still here")).toEqual({ isError: false, text: "still here\n" })
    }))

  it.live("closing the client ends the server and every process it started", () =>
    Effect.gen(function*() {
      const { client, pid } = yield* connectUnmanaged
      const started = yield* bash(client, "echo $$ > closing.pid; sleep 30 & sleep 30", { run_in_background: true })
      expect(started.text).toBe("started background task bash-1")
      const shell = yield* pidFrom("closing.pid")
      expect(yield* groupHas(shell, 3)).toBe(true)
      const descendants = descendantsOf(pid)
      expect(descendants).toEqual(expect.arrayContaining(membersOfGroups([shell])))
      const closing = Date.now()
      yield* Effect.promise(() => client.close())
      expect(isAlive(pid)).toBe(false)
      expect(Date.now() - closing).toBeLessThan(2000)
      expect(descendants.filter(isAlive)).toEqual([])
      expect(membersOfGroups([shell])).toEqual([])
    }))

  it.live("SIGTERM while a foreground call runs: the server exits, leaving no process", () =>
    Effect.gen(function*() {
      const { client, pid } = yield* connectUnmanaged
      const call = yield* Effect.fork(bash(client, "echo $$ > foreground.pid; trap '' TERM; sleep 30 & wait", {
        timeoutMs: 60_000
      }))
      const shell = yield* pidFrom("foreground.pid")
      // The pid is written before `sleep 30 &` forks: wait for both members.
      expect(yield* groupHas(shell, 2)).toBe(true)
      const descendants = descendantsOf(pid)
      expect(descendants).toEqual(expect.arrayContaining(membersOfGroups([shell])))
      process.kill(pid, "SIGTERM")
      expect(yield* Effect.promise(() => eventually(() => !isAlive(pid), 5000))).toBe(true)
      expect(descendants.filter(isAlive)).toEqual([])
      expect(membersOfGroups([shell])).toEqual([])
      yield* Fiber.interrupt(call)
      yield* Effect.promise(() => client.close())
    }))

  it.live("survives a malformed line, answers string ids, and -32601 for an unknown method", () =>
    Effect.promise(async () => {
      const server = spawn(process.execPath, [cliPath, "mcp", "--workdir", workdir], {
        env: cleanEnv(),
        stdio: ["pipe", "pipe", "pipe"]
      })
      const lines: Array<Record<string, unknown>> = []
      let buffer = ""
      let stderr = ""
      server.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk))
      server.stdout.setEncoding("utf8").on("data", (chunk: string) => {
        buffer += chunk
        const complete = buffer.split("\n")
        buffer = complete.pop() ?? ""
        for (const line of complete) lines.push(JSON.parse(line) as Record<string, unknown>)
      })
      const exited = new Promise<number | null>((resolve) => server.on("close", resolve))
      const send = (message: unknown) => server.stdin.write(`${JSON.stringify(message)}\n`)
      server.stdin.write("this is not json\n")
      send({
        jsonrpc: "2.0",
        id: "init-1",
        method: "initialize",
        params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "0" } }
      })
      send({ jsonrpc: "2.0", method: "notifications/initialized" })
      send({ jsonrpc: "2.0", id: 2, method: "no/such/method" })
      send({ jsonrpc: "2.0", id: "call-3", method: "tools/call", params: { name: "bash", arguments: { command: "echo raw", description } } })
      expect(await eventually(() => lines.length >= 4)).toBe(true)
      server.stdin.end()
      expect(await exited).toBe(0)
      // Answers may come in any order: match them by id.
      const answer = (id: unknown) => lines.find((line) => line.id === id)
      expect(lines).toHaveLength(4)
      expect(answer(null)).toEqual({
        jsonrpc: "2.0",
        id: null,
        error: { code: -32700, message: "Parse error: the line is not valid JSON" }
      })
      expect(answer("init-1")).toMatchObject({ result: { serverInfo: { name: "effect-bash" } } })
      expect(answer(2)).toMatchObject({ error: { code: -32601 } })
      expect(answer("call-3")).toMatchObject({ result: { content: [{ type: "text", text: "raw\n" }] } })
      // The malformed line is logged on stderr (stdout carried only the four JSON answers above).
      expect(stderr).toMatch(/^timestamp=\S+ level=WARN .*message="mcp: /m)
    }))
})
