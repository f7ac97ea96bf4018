/**
 * Terminals through the Cordis plugin, inside the real harness (`@deepseek-ai/cordis` with
 * `SystemPrompt` and `ToolRuntime`), on real PTYs: `ctx.terminals` used the way the reference's
 * terminal service is (`spawn`, `startSend` then `await done`, `read`, `signal`, `kill`, `list`,
 * `hasOwnerActivity`, owners by agent, the reference's error codes), the six tools registered with
 * the harness's registry beside `bash`, and nothing of a terminal left running once the plugin unloads.
 */
import { Context } from "@deepseek-ai/cordis"
import { realpathSync } from "node:fs"
import { SystemPrompt } from "@deepseek-ai/dsh-system-prompt"
import ToolRuntime from "@deepseek-ai/dsh-tools"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import EffectBash from "../../src/cordis-adapter.js"
import type { CordisTerminals } from "../../src/cordis-adapter.js"
import { eventually, tempDir } from "../support/cordis.js"
import { isAlive } from "../support/processes.js"

let root: Context
let dir: ReturnType<typeof tempDir>
let calls = 0

const agentFor = (id: string) => ({ session: { header: { id, cwd: dir.path } } })

const terminals = (): CordisTerminals => root.get("terminals") as CordisTerminals

const execute = async (name: string, args: unknown, session: string) => {
  const result = await root.tools.execute({
    callId: `call-${++calls}` as never,
    name,
    arguments: args,
    signal: new AbortController().signal,
    agent: agentFor(session) as never
  })
  const [block] = result.content
  return { isError: result.isError, text: block?.type === "text" ? block.text : "" }
}

const load = async (config: Record<string, unknown>) => {
  await root.plugin(SystemPrompt)
  await root.plugin(ToolRuntime)
  await root.plugin(EffectBash, { graceMs: 300, spillParent: dir.path, ...config })
}

beforeEach(() => {
  root = new Context()
  dir = tempDir("effect-bash-cordis-terminals-")
})
afterEach(async () => {
  await root.fiber.dispose()
  dir.remove()
})

describe("ctx.terminals, the reference's way", () => {
  beforeEach(() => load({ terminals: { idleSilenceMs: 1_500, closeGraceMs: 1_000 } }))

  it("spawns, sends, reads, lists and kills for an agent", async () => {
    const agent = agentFor("s1")
    const service = terminals()
    expect(service.listBackends()).toEqual(["shell"])
    expect(service.hasOwnerActivity(agent)).toBe(false)
    const opened = await service.spawn(agent, { type: "shell", name: "main" })
    expect(opened).toMatchObject({ sessionId: "pty-1", name: "main", type: "shell", status: { kind: "running" } })
    expect(opened.motd).toContain("dsh> ")
    expect(service.hasOwnerActivity(agent)).toBe(true)
    // The managed variables of the owner's session are in the shell.
    const operation = service.startSend(agent, opened.sessionId, { text: "echo \"hi $DSH_SESSION_ID\"", submit: true })
    const result = await operation.done
    expect(result).toMatchObject({ waitReason: "stdin_read", sessionStatus: { kind: "running" }, truncated: false })
    expect(result.viewport).toContain("hi s1\n")
    expect(operation.cancel()).toBe(false)
    expect(service.read(agent, opened.sessionId, { count: 2 })).toMatchObject({
      text: "hi s1\ndsh> ",
      lineBegin: 0,
      lineEnd: 2
    })
    // The terminal starts in the agent's session directory, as the tools start it.
    const where = await service.startSend(agent, opened.sessionId, { text: "pwd -P", submit: true }).done
    expect(where.viewport).toContain(`\n${realpathSync(dir.path)}\n`)
    expect(service.list(agent)).toEqual([
      { sessionId: "pty-1", name: "main", type: "shell", pid: opened.pid, status: { kind: "running" } }
    ])
    expect(await service.signal(agent, opened.sessionId, "SIGINT")).toEqual({ delivered: true, targetPgid: opened.pid })
    expect(await service.kill(agent, opened.sessionId, "done")).toBe(true)
    expect(isAlive(opened.pid!)).toBe(false)
    expect(service.list(agent)).toEqual([])
    expect(service.hasOwnerActivity(agent)).toBe(false)
  })

  it("a send's signal stops the foreground command with SIGINT; its output is read as it comes", async () => {
    const agent = agentFor("s1")
    const service = terminals()
    const { sessionId } = await service.spawn(agent, { type: "shell" })
    const abort = new AbortController()
    const operation = service.startSend(agent, sessionId, { text: "echo begun; sleep 600", submit: true, signal: abort.signal })
    expect(await eventually(() => operation.readOutput().delta.includes("begun") || undefined)).toBe(true)
    abort.abort()
    const result = await operation.done
    expect(result.waitReason).toBe("stdin_read")
    expect(result.viewport).toContain("dsh> ")
  })

  it("refuses with the reference's codes: another agent, an unknown id, a busy terminal, a taken name", async () => {
    const service = terminals()
    const { sessionId } = await service.spawn(agentFor("s1"), { type: "shell", name: "main" })
    const refusal = (call: () => unknown) => {
      try {
        call()
      } catch (error) {
        return { code: (error as { code?: string }).code, message: (error as Error).message }
      }
      return undefined
    }
    expect(refusal(() => service.read(agentFor("s2"), sessionId))).toEqual({
      code: "FOREIGN_SESSION",
      message: `PTY session ${sessionId} belongs to another agent`
    })
    expect(refusal(() => service.read(agentFor("s1"), "pty-9"))).toEqual({
      code: "NO_SESSION",
      message: "unknown PTY session pty-9"
    })
    const running = service.startSend(agentFor("s1"), sessionId, { text: "sleep 600", submit: true })
    expect(refusal(() => service.startSend(agentFor("s1"), sessionId, { text: "true" }))).toEqual({
      code: "SEND_ACTIVE",
      message: `PTY session ${sessionId} already has an active send`
    })
    running.cancel()
    await running.done
    await expect(service.spawn(agentFor("s1"), { type: "shell", name: "main" })).rejects.toMatchObject({
      code: "DUPLICATE_NAME",
      message: `PTY session name "main" already exists for this owner`
    })
    await expect(service.spawn(agentFor("s1"), { type: "gdb" })).rejects.toMatchObject({ code: "NO_BACKEND" })
    expect(() => service.list({})).toThrow("a terminal owner must be a session id or an agent with a session")
  })
})

describe("the terminal tools through the plugin", () => {
  it("registers the six tools beside bash; a terminal the tools open is the agent's in ctx.terminals", async () => {
    await load({ terminals: { idleSilenceMs: 1_500, closeGraceMs: 1_000 } })
    const names = root.tools.schemas().map((schema) => schema.name)
    expect(names).toEqual(expect.arrayContaining([
      "bash",
      "terminal_open",
      "terminal_send",
      "terminal_read",
      "terminal_signal",
      "terminal_close",
      "terminal_list"
    ]))
    expect(await execute("terminal_open", { type: "shell" }, "s1")).toEqual({
      isError: false,
      text: "started terminal session pty-1 [type: shell]\ndsh> "
    })
    const sent = await execute("terminal_send", { sessionId: "pty-1", text: "echo tool" }, "s1")
    expect(sent.text).toBe("echo tool\ntool\ndsh> \n[wait: stdin_read]\n[session: running]")
    const [listed] = terminals().list(agentFor("s1"))
    expect(listed).toMatchObject({ sessionId: "pty-1", type: "shell" })
    expect(await execute("terminal_send", { sessionId: "pty-1", text: "echo x" }, "s2")).toEqual({
      isError: true,
      text: "Error: PTY session pty-1 belongs to another agent"
    })
    // Unloading the plugin closes the terminal: its shell is gone once dispose resolves.
    await root.fiber.dispose()
    expect(isAlive(listed!.pid!)).toBe(false)
  })

  it("without terminals in the config there is no ctx.terminals and no terminal tool", async () => {
    await load({})
    expect(root.get("terminals")).toBeUndefined()
    expect(root.tools.schemas().map((schema) => schema.name).filter((name) => name.startsWith("terminal_"))).toEqual([])
  })
})
