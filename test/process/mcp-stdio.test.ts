import { describe, expect, it } from "@effect/vitest"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js"
import { Effect, Fiber } from "effect"
import { spawn } from "node:child_process"
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll } from "vitest"
import { bwrapUsable } from "../support/bwrap.js"
import { cleanEnv, cliPath, eventually } from "../support/cli.js"
import { dockerUnavailable, testImage } from "../support/docker.js"
import { pollUntil } from "../support/poll.js"
import { childrenOf, descendantsOf, isAlive, liveMembersOf } from "../support/processes.js"

const workdir = mkdtempSync(join(tmpdir(), "effect-bash-mcp-"))
afterAll(() => rmSync(workdir, { recursive: true, force: true }))

const description = "A test command for the MCP server"

/** Live processes whose command line matches `pattern` (NUL-separated), from /proc. */
const listSleeps = (pattern: RegExp): ReadonlyArray<number> =>
  readdirSync("/proc").filter((entry) => /^\d+$/.test(entry)).map(Number).filter((pid) => {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, "latin1")
      const state = stat.slice(stat.lastIndexOf(")") + 2)[0]
      return state !== "Z" && pattern.test(readFileSync(`/proc/${pid}/cmdline`, "latin1"))
    } catch {
      return false
    }
  })

/** Starts `effect-bash mcp` as a real stdio subprocess and connects the official SDK client. */
const connectWith = (
  options: { readonly flags?: ReadonlyArray<string>; readonly env?: Record<string, string> } = {}
) => Effect.promise(async () => {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [cliPath, "mcp", "--workdir", workdir, ...(options.flags ?? [])],
    env: options.env ?? cleanEnv({ EFFECT_BASH_GRACE_MS: "300" }),
    stderr: "pipe"
  })
  const client = new Client({ name: "mcp-stdio-test", version: "0.0.0" })
  await client.connect(transport)
  const pid = transport.pid
  if (pid === null) throw new Error("the server did not start")
  return { client, pid }
})
const connectUnmanaged = connectWith()

/**
 * The server shared by the tests that neither end it nor change its flags or environment: started
 * once for the file, closed after its last test (the others start their own).
 */
let shared: { readonly client: Client; readonly pid: number } | undefined
beforeAll(async () => {
  shared = await Effect.runPromise(connectUnmanaged)
})
afterAll(() => shared?.client.close())
const connect = Effect.sync(() => {
  if (shared === undefined) throw new Error("the shared server did not start")
  return shared
})
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
  Effect.promise(() => eventually(() => liveMembersOf([pgid]).length === count))

/** The server as a raw process: lines in on stdin, the JSON answers collected from stdout. */
const startRaw = (env: Record<string, string> = {}, flags: ReadonlyArray<string> = []) => {
  const server = spawn(process.execPath, [cliPath, "mcp", ...flags, "--workdir", workdir], {
    env: cleanEnv(env),
    stdio: ["pipe", "pipe", "pipe"]
  })
  const lines: Array<Record<string, unknown>> = []
  const texts: Array<string> = []
  let buffer = ""
  const raw = { stderr: "" }
  server.stderr.setEncoding("utf8").on("data", (chunk: string) => (raw.stderr += chunk))
  server.stdout.setEncoding("utf8").on("data", (chunk: string) => {
    buffer += chunk
    const complete = buffer.split("\n")
    buffer = complete.pop() ?? ""
    for (const line of complete) {
      texts.push(line)
      lines.push(JSON.parse(line) as Record<string, unknown>)
    }
  })
  server.stdin.on("error", () => undefined)
  const closed = new Promise<number | null>((resolve) => server.on("close", resolve))
  /** The exit code once the server exits, or "still running" after `limitMs` (then it is SIGKILLed). */
  const exited = async (limitMs = 5000): Promise<number | null | "still running"> => {
    const outcome = await Promise.race([
      closed,
      new Promise<"still running">((resolve) => setTimeout(() => resolve("still running"), limitMs))
    ])
    if (outcome === "still running") server.kill("SIGKILL")
    return outcome
  }
  return {
    pid: server.pid!,
    lines,
    /** The answers as written, for what JSON.parse would change (ids beyond 2^53). */
    texts,
    get stderr() {
      return raw.stderr
    },
    write: (text: string) => server.stdin.write(text),
    send: (message: unknown) => server.stdin.write(`${JSON.stringify(message)}\n`),
    /** The client stops reading: the server's next write fails with EPIPE. */
    closeStdout: () => server.stdout.destroy(),
    /** Nobody reads the server's log any more: its next write there fails with EPIPE. */
    closeStderr: () => server.stderr.destroy(),
    exited,
    /** Ends stdin, then as `exited`. */
    end: (limitMs = 5000) => {
      server.stdin.end()
      return exited(limitMs)
    }
  }
}

const initialize = (id: string | number) => ({
  jsonrpc: "2.0",
  id,
  method: "initialize",
  params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "0" } }
})

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
      const { client } = yield* Effect.acquireRelease(connectWith({ flags: ["--no-background"] }), closeClient)
      const { tools } = yield* Effect.promise(() => client.listTools())
      expect(Object.keys(tools[0]?.inputSchema.properties ?? {})).not.toContain("run_in_background")
    }))

  it.scopedLive("--terminals serves the six terminal tools, and a terminal keeps its shell across calls", () =>
    Effect.gen(function*() {
      const { client } = yield* Effect.acquireRelease(connectWith({ flags: ["--terminals"] }), closeClient)
      const { tools } = yield* Effect.promise(() => client.listTools())
      expect(tools.map((tool) => tool.name)).toEqual([
        "bash",
        "task_output",
        "task_list",
        "task_kill",
        "terminal_open",
        "terminal_send",
        "terminal_read",
        "terminal_signal",
        "terminal_close",
        "terminal_list"
      ])
      const opened = yield* text(client, "terminal_open", { type: "shell" })
      expect(opened.text).toBe("started terminal session pty-1 [type: shell]\ndsh> ")
      yield* text(client, "terminal_send", { sessionId: "pty-1", text: "cd / && X=kept" })
      const sent = yield* text(client, "terminal_send", { sessionId: "pty-1", text: "echo \"$X in $(pwd)\"" })
      expect(sent.text).toBe("echo \"$X in $(pwd)\"\nkept in /\ndsh> \n[wait: stdin_read]\n[session: running]")
      expect((yield* text(client, "terminal_close", { sessionId: "pty-1" })).text).toBe("closed terminal session pty-1")
    }))

  it.scopedLive.skipIf(!bwrapUsable)("--terminals with --sandbox runs the terminal's shell in bubblewrap", () =>
    Effect.gen(function*() {
      const { client } = yield* Effect.acquireRelease(
        connectWith({ flags: ["--terminals", "--sandbox", "read-only"] }),
        closeClient
      )
      yield* text(client, "terminal_open", { type: "shell" })
      const sent = yield* text(client, "terminal_send", { sessionId: "pty-1", text: "echo \"pid $$\"; touch /usr/effect-bash-mcp" })
      expect(sent.text).toContain("\npid 2\n")
      expect(sent.text).toMatch(/touch: cannot touch '\/usr\/effect-bash-mcp': Read-only file system/)
      expect((yield* text(client, "terminal_close", { sessionId: "pty-1" })).text).toBe("closed terminal session pty-1")
    }))

  it.scopedLive.skipIf(dockerUnavailable !== undefined)(
    "--terminals with --container-image runs the terminal's shell in the box the bash calls run in",
    () =>
      Effect.gen(function*() {
        const { client } = yield* Effect.acquireRelease(
          connectWith({ flags: ["--terminals", "--container-image", testImage] }),
          closeClient
        )
        const opened = yield* text(client, "terminal_open", { type: "shell" })
        expect(opened.text).toBe("started terminal session pty-1 [type: shell]\ndsh> ")
        // A file of the box's own /tmp, which the host does not share: the bash call finds it there.
        const mark = `/tmp/effect-bash-mcp-terminal-${process.pid}`
        const sent = yield* text(client, "terminal_send", { sessionId: "pty-1", text: `echo boxed > ${mark}; cat /proc/1/cmdline | tr '\\0' ' '` })
        expect(sent.text).toContain("docker-init -- sleep infinity")
        expect(sent.text).toContain("[wait: stdin_read]")
        expect(yield* bash(client, `cat ${mark}`)).toEqual({ isError: false, text: "boxed\n" })
        expect(existsSync(mark)).toBe(false)
        expect((yield* text(client, "terminal_close", { sessionId: "pty-1" })).text).toBe("closed terminal session pty-1")
      })
  )

  it.scopedLive("a host killed with SIGKILL takes its terminal's jobs along (the PTY hangs up)", () =>
    Effect.gen(function*() {
      const { client, pid } = yield* connectWith({ flags: ["--terminals"] })
      yield* text(client, "terminal_open", { type: "shell" })
      yield* text(client, "terminal_send", { sessionId: "pty-1", text: "sleep 9961 &" })
      const started = yield* text(client, "terminal_send", {
        sessionId: "pty-1",
        text: "sleep 9962",
        run_in_background: true
      })
      expect(started.text).toBe("started background task terminal-1")
      const sleeps = () => listSleeps(/^sleep\u000099(61|62)\u0000$/)
      expect(yield* Effect.promise(() => pollUntil(sleeps, (found) => found.length === 2, 10_000, 20))).toHaveLength(2)
      process.kill(pid, "SIGKILL")
      expect(yield* Effect.promise(() => pollUntil(sleeps, (found) => found.length === 0, 10_000, 20))).toEqual([])
      yield* Effect.promise(() => client.close())
    }))

  it.scopedLive.skipIf(!bwrapUsable)("a sandboxed terminal's daemon that ignores hangups goes with a host killed by SIGKILL", () =>
    Effect.gen(function*() {
      const { client, pid } = yield* connectWith({ flags: ["--terminals", "--sandbox", "read-only"] })
      yield* text(client, "terminal_open", { type: "shell" })
      yield* text(client, "terminal_send", {
        sessionId: "pty-1",
        text: "(setsid sh -c 'trap \"\" HUP; exec sleep 9964' </dev/null >/dev/null 2>&1 &)"
      })
      const daemon = () => listSleeps(/^sleep\u00009964\u0000$/)
      expect(yield* Effect.promise(() => pollUntil(daemon, (found) => found.length === 1, 10_000, 20))).toHaveLength(1)
      process.kill(pid, "SIGKILL")
      // bubblewrap dies with its parent, and its PID namespace with it.
      expect(yield* Effect.promise(() => pollUntil(daemon, (found) => found.length === 0, 10_000, 20))).toEqual([])
      yield* Effect.promise(() => client.close())
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
      expect(liveMembersOf([shell])).toEqual([])
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
      expect(yield* Effect.promise(() => eventually(() => liveMembersOf([shell]).length === 0))).toBe(true)
      // The server stays usable after a cancellation.
      expect(yield* bash(client, "echo still here")).toEqual({ isError: false, text: "still here\n" })
    }))

  it.scopedLive("a call with a progress token gets the command's lines as progress before the result", () =>
    Effect.gen(function*() {
      const { client } = yield* connect
      const errors: Array<Error> = []
      // A progress notification without a known token would surface here (the shared client's own
      // handler comes back when the test ends).
      const onerror = client.onerror
      yield* Effect.addFinalizer(() =>
        Effect.sync(() => {
          if (onerror === undefined) delete client.onerror
          else client.onerror = onerror
        })
      )
      client.onerror = (error) => errors.push(error)
      const updates: Array<{ readonly progress: number; readonly message?: string | undefined }> = []
      const command = "for i in 1 2 3; do echo line$i; sleep 0.4; done"
      const result = yield* Effect.promise(() =>
        client.callTool({ name: "bash", arguments: { command, description } }, undefined, {
          onprogress: (update) => void updates.push(update)
        })
      )
      const updatesBeforeResult = [...updates]
      expect(updatesBeforeResult.length).toBeGreaterThanOrEqual(2)
      expect(updatesBeforeResult.map((update) => update.message).join("")).toBe("line1\nline2\nline3\n")
      const counts = updatesBeforeResult.map((update) => update.progress)
      expect(counts).toEqual([...counts].sort((a, b) => a - b))
      expect(new Set(counts).size).toBe(counts.length)
      expect(result.content).toEqual([{ type: "text", text: "line1\nline2\nline3\n" }])
      // Without a token: the same result and no notification at all.
      expect(yield* bash(client, command)).toEqual({ isError: false, text: "line1\nline2\nline3\n" })
      expect(updates.length).toBe(updatesBeforeResult.length)
      expect(errors).toEqual([])
    }))

  it.scopedLive("a cancelled request with a progress token still kills the command", () =>
    Effect.gen(function*() {
      const { client } = yield* connect
      const controller = new AbortController()
      let onFirstUpdate: (message: string | undefined) => void = () => undefined
      const firstUpdate = new Promise<string | undefined>((resolve) => (onFirstUpdate = resolve))
      const pending = client.callTool(
        { name: "bash", arguments: { command: "echo $$; sleep 30 & wait", description } },
        undefined,
        { signal: controller.signal, onprogress: (update) => onFirstUpdate(update.message) }
      )
      pending.catch(() => undefined)
      // The shell's pid arrives as progress: the command is running.
      const shell = Number(yield* Effect.promise(() => firstUpdate))
      expect(yield* groupHas(shell, 2)).toBe(true)
      controller.abort("stop")
      expect(yield* Effect.promise(() => eventually(() => liveMembersOf([shell]).length === 0))).toBe(true)
    }))

  it.live("closing the client ends the server and every process it started", () =>
    Effect.gen(function*() {
      const { client, pid } = yield* connectUnmanaged
      const started = yield* bash(client, "echo $$ > closing.pid; sleep 30 & sleep 30", { run_in_background: true })
      expect(started.text).toBe("started background task bash-1")
      const shell = yield* pidFrom("closing.pid")
      expect(yield* groupHas(shell, 3)).toBe(true)
      const descendants = descendantsOf(pid)
      expect(descendants).toEqual(expect.arrayContaining(liveMembersOf([shell])))
      const closing = Date.now()
      yield* Effect.promise(() => client.close())
      expect(isAlive(pid)).toBe(false)
      expect(Date.now() - closing).toBeLessThan(2000)
      expect(descendants.filter(isAlive)).toEqual([])
      expect(liveMembersOf([shell])).toEqual([])
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
      expect(descendants).toEqual(expect.arrayContaining(liveMembersOf([shell])))
      process.kill(pid, "SIGTERM")
      expect(yield* Effect.promise(() => eventually(() => !isAlive(pid), 5000))).toBe(true)
      expect(descendants.filter(isAlive)).toEqual([])
      expect(liveMembersOf([shell])).toEqual([])
      yield* Fiber.interrupt(call)
      yield* Effect.promise(() => client.close())
    }))

  it.live("answers initialize before forking its helper (the reaper), which starts once the client says initialized", () =>
    Effect.promise(async () => {
      const server = startRaw()
      server.send(initialize(1))
      expect(await eventually(() => server.lines.length >= 1, 15_000)).toBe(true)
      expect(server.lines[0]).toMatchObject({ id: 1, result: { serverInfo: { name: "effect-bash" } } })
      expect(childrenOf(server.pid)).toEqual([])
      server.send({ jsonrpc: "2.0", method: "notifications/initialized" })
      expect(await eventually(() => childrenOf(server.pid).length === 1, 15_000)).toBe(true)
      expect(await server.end()).toBe(0)
    }))

  it.live("starts its helpers on an initialized that arrives with initialize, before any answer (a sandbox's held first message)", () =>
    Effect.promise(async () => {
      // danger-full-access: no runner probe, whose spawn would start the helpers anyway.
      const server = startRaw({}, ["--sandbox", "danger-full-access"])
      server.write(`${JSON.stringify(initialize(1))}\n${JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" })}\n`)
      expect(await eventually(() => childrenOf(server.pid).length === 1, 15_000)).toBe(true)
      expect(await eventually(() => server.lines.length >= 1, 15_000)).toBe(true)
      expect(server.lines[0]).toMatchObject({ id: 1, result: { serverInfo: { name: "effect-bash" } } })
      expect(await server.end()).toBe(0)
    }))

  it.live("survives a malformed line, answers string ids, and -32601 for an unknown method", () =>
    Effect.promise(async () => {
      const server = startRaw()
      server.write("this is not json\n")
      server.send(initialize("init-1"))
      server.send({ jsonrpc: "2.0", method: "notifications/initialized" })
      server.send({ jsonrpc: "2.0", id: 2, method: "no/such/method" })
      server.send({ jsonrpc: "2.0", id: "call-3", method: "tools/call", params: { name: "bash", arguments: { command: "echo raw", description } } })
      const { lines } = server
      expect(await eventually(() => lines.length >= 4, 15_000)).toBe(true)
      expect(await server.end()).toBe(0)
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
      expect(server.stderr).toMatch(/^timestamp=\S+ level=WARN .*message="mcp: /m)
    }))

  it.live("answers requests whose ids JavaScript cannot hold exactly, echoing each id's text", () =>
    Effect.promise(async () => {
      const server = startRaw()
      server.write(`{"jsonrpc":"2.0","id":9007199254740993,"method":"initialize","params":${JSON.stringify(initialize(0).params)}}\n`)
      server.send({ jsonrpc: "2.0", method: "notifications/initialized" })
      server.write(`{"jsonrpc":"2.0","id":1e308,"method":"ping"}\n`)
      server.write(`{"jsonrpc":"2.0","id":-0.5,"method":"tools/call","params":{"name":"bash","arguments":{"command":"echo exact","description":"d"}}}\n`)
      const { texts } = server
      expect(await eventually(() => texts.length >= 3, 15_000)).toBe(true)
      expect(await server.end()).toBe(0)
      // The answer whose id is written exactly as `id`, without that id.
      const answer = (id: string) => {
        const text = texts.find((line) => line.startsWith(`{"id":${id},`))
        return text === undefined ? undefined : JSON.parse(`{${text.slice(`{"id":${id},`.length)}`) as unknown
      }
      expect(answer("9007199254740993")).toMatchObject({ jsonrpc: "2.0", result: { serverInfo: { name: "effect-bash" } } })
      expect(answer("1e308")).toEqual({ jsonrpc: "2.0", result: {} })
      expect(answer("-0.5")).toEqual({ jsonrpc: "2.0", result: { content: [{ type: "text", text: "exact\n" }] } })
      expect(texts).toHaveLength(3)
    }))

  it.live("answers a line over the 10 MiB read limit with its id, keeps serving, and exits when stdin ends", () =>
    Effect.promise(async () => {
      const server = startRaw()
      server.send(initialize(1))
      // Written as the official SDK client writes a request: the id is the last key.
      const huge = { method: "tools/call", params: { name: "bash", arguments: { command: `echo ${"x".repeat(11 * 1024 * 1024)}`, description } }, jsonrpc: "2.0", id: 2 }
      server.send(huge)
      server.send({ jsonrpc: "2.0", id: 3, method: "ping" })
      const { lines } = server
      const answered = await eventually(() => lines.some((line) => line.id === 3), 15_000)
      const exit = await server.end()
      expect(answered).toBe(true)
      expect(lines.find((line) => line.id === 2)).toEqual({
        jsonrpc: "2.0",
        id: 2,
        error: { code: -32600, message: "Invalid Request: the message is longer than 10485760 bytes" }
      })
      expect(lines.find((line) => line.id === 3)).toEqual({ jsonrpc: "2.0", id: 3, result: {} })
      expect(exit).toBe(0)
    }))

  it.live("the official SDK's close sequence with default settings leaves no process alive, TERM-ignoring ones included", () =>
    Effect.gen(function*() {
      // Default settings (graceMs 3000): the SDK ends stdin, sends SIGTERM 2 s later and SIGKILL 2 s
      // after that. A SIGKILLed server kills nothing, so the shutdown must finish inside that window.
      const { client, pid } = yield* connectWith({ env: cleanEnv() })
      const stubborn = "trap '' TERM; sleep 30 & wait"
      const started = yield* bash(client, `echo $$ > stubborn-bg.pid; ${stubborn}`, { run_in_background: true })
      expect(started.text).toBe("started background task bash-1")
      const call = yield* Effect.fork(bash(client, `echo $$ > stubborn-fg.pid; ${stubborn}`, { timeoutMs: 60_000 }))
      const groups = [yield* pidFrom("stubborn-bg.pid"), yield* pidFrom("stubborn-fg.pid")]
      expect(yield* groupHas(groups[0]!, 2)).toBe(true)
      expect(yield* groupHas(groups[1]!, 2)).toBe(true)
      const descendants = descendantsOf(pid)
      yield* Effect.promise(() => client.close())
      expect(isAlive(pid)).toBe(false)
      expect(liveMembersOf(groups)).toEqual([])
      expect(descendants.filter(isAlive)).toEqual([])
      yield* Fiber.interrupt(call)
    }))

  it.live("when stdin ends every request is answered: a call that ends within the drain, one cut short, and a last line without a newline", () =>
    Effect.promise(async () => {
      const server = startRaw()
      const call = (id: number, command: string) =>
        server.send({ jsonrpc: "2.0", id, method: "tools/call", params: { name: "bash", arguments: { command, description } } })
      server.send(initialize(1))
      server.send({ jsonrpc: "2.0", method: "notifications/initialized" })
      // Runs until the test lets it go, just after stdin has ended: in flight then, done within the drain.
      call(2, "until [ -e stdin-end-go ]; do sleep 0.01; done; echo drained")
      call(3, "sleep 30")
      server.write(JSON.stringify({ jsonrpc: "2.0", id: 4, method: "ping" }))
      const exited = server.end(10_000)
      writeFileSync(join(workdir, "stdin-end-go"), "")
      expect(await exited).toBe(0)
      const answer = (id: number) => server.lines.find((line) => line.id === id)
      expect(answer(2)).toEqual({ jsonrpc: "2.0", id: 2, result: { content: [{ type: "text", text: "drained\n" }] } })
      expect(answer(3)).toEqual({ jsonrpc: "2.0", id: 3, result: { content: [{ type: "text", text: "command aborted" }], isError: true } })
      expect(answer(4)).toEqual({ jsonrpc: "2.0", id: 4, result: {} })
    }))

  it.live("a SIGTERM during the drain after stdin ended: every call still in flight answers `command aborted`", () =>
    Effect.promise(async () => {
      // At debug level the server says when it starts shutting down: the SIGTERM comes during the drain.
      // (`--log-level`, @effect/cli's own flag, goes before the subcommand's.)
      const server = startRaw({}, ["--log-level", "debug"])
      server.send(initialize(1))
      server.send({ jsonrpc: "2.0", method: "notifications/initialized" })
      const pidFiles = ["drain-term-2.pid", "drain-term-3.pid"].map((name) => join(workdir, name))
      const calls = [[2, "sleep 30"], [3, "trap '' TERM; sleep 31 & wait"]] as const
      calls.forEach(([id, command], index) =>
        server.send({
          jsonrpc: "2.0",
          id,
          method: "tools/call",
          params: { name: "bash", arguments: { command: `echo $$ > ${pidFiles[index]}; ${command}`, description } }
        })
      )
      expect(await eventually(() => pidFiles.every((file) => existsSync(file) && readFileSync(file, "utf8").endsWith("\n")))).toBe(true)
      const groups = pidFiles.map((file) => Number(readFileSync(file, "utf8")))
      const exited = server.end(10_000)
      expect(await eventually(() => server.stderr.includes("shutting down"))).toBe(true)
      process.kill(server.pid, "SIGTERM")
      expect(await exited).not.toBe("still running")
      const aborted = (id: number) => ({ jsonrpc: "2.0", id, result: { content: [{ type: "text", text: "command aborted" }], isError: true } })
      expect(server.lines.filter((line) => line.id === 2 || line.id === 3)).toEqual([aborted(2), aborted(3)])
      expect(liveMembersOf(groups)).toEqual([])
    }))

  it.live("a log nobody reads any more (stderr closed) does not stop the server: it keeps answering", () =>
    Effect.promise(async () => {
      const server = startRaw()
      server.closeStderr()
      server.send(initialize(1))
      // Each malformed line is answered on stdout and logged on stderr, where the write fails; one at
      // a time, so each log line is written after the previous failure was reported.
      for (let i = 1; i <= 3; i++) {
        server.write("not json\n")
        expect(await eventually(() => server.lines.filter((line) => line.id === null).length === i, 15_000)).toBe(true)
      }
      server.send({ jsonrpc: "2.0", id: 2, method: "ping" })
      expect(await eventually(() => server.lines.some((line) => line.id === 2), 15_000)).toBe(true)
      expect(await server.end()).toBe(0)
    }))

  it.live("a client that stops reading ends the server cleanly: exit 0, no process left", () =>
    Effect.gen(function*() {
      const server = startRaw()
      server.send(initialize(1))
      server.send({
        jsonrpc: "2.0",
        id: 2,
        method: "tools/call",
        params: { name: "bash", arguments: { command: "echo $$ > reader-gone.pid; sleep 30", description, run_in_background: true } }
      })
      const shell = yield* pidFrom("reader-gone.pid")
      server.closeStdout()
      // Its answer cannot be written: EPIPE closes the transport, which shuts the server down.
      server.send({ jsonrpc: "2.0", id: 3, method: "ping" })
      expect(yield* Effect.promise(() => server.exited(10_000))).toBe(0)
      expect(liveMembersOf([shell])).toEqual([])
    }))
})
