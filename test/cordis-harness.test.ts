/**
 * The adapter inside the real harness: `@deepseek-ai/cordis` 4.0.4 with `SystemPrompt` then
 * `ToolRuntime`, then our plugin. Calls go through the harness's own `ctx.tools.execute`, so every
 * text below is exactly what a model would see.
 */
import { readFileSync, realpathSync } from "node:fs"
import { join } from "node:path"
import { Context } from "@deepseek-ai/cordis"
import { SystemPrompt } from "@deepseek-ai/dsh-system-prompt"
import ToolRuntime from "@deepseek-ai/dsh-tools"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import EffectBash from "../src/cordis-adapter.js"
import { groupMembers, readPid, tempDir, termIgnoringCommand } from "./cordis-support.js"
import { bwrapUsable } from "./support/bwrap.js"

interface Outcome {
  readonly isError: boolean
  readonly text: string
  readonly value: unknown
  readonly meta: unknown
}

let root: Context
let dir: ReturnType<typeof tempDir>
let loaded: Array<{ readonly dispose: () => Promise<void> }> = []
let calls = 0

const agentFor = (id: string) => ({ session: { header: { id, cwd: dir.path } } })

const execute = async (
  name: string,
  args: unknown,
  options: { readonly session?: string; readonly signal?: AbortSignal } = {}
): Promise<Outcome> => {
  const result = await root.tools.execute({
    callId: `call-${++calls}` as never,
    name,
    arguments: args,
    signal: options.signal ?? new AbortController().signal,
    // The registry and our tool read only `agent.session.header` of the agent.
    ...(options.session === undefined ? {} : { agent: agentFor(options.session) as never })
  })
  const [block] = result.content
  return {
    isError: result.isError,
    text: block?.type === "text" ? block.text : "",
    value: result.isError ? undefined : result.value,
    meta: result.meta
  }
}

const bash = (command: string, extra: Record<string, unknown> = {}) =>
  execute("bash", { command, description: "run a shell command for the test", ...extra }, { session: "s1" })

const loadHarness = async () => {
  await root.plugin(SystemPrompt)
  return root.plugin(ToolRuntime)
}

const loadPlugin = (config: Record<string, unknown> = {}) => {
  const fiber = root.plugin(EffectBash, {
    graceMs: 300,
    spillParent: dir.path,
    maxOutputBytes: 1_000,
    ...config
  })
  loaded.push(fiber)
  return fiber
}

const toolNames = () => root.tools.schemas().map((schema) => schema.name)
const sectionNames = async () => (await root.systemPrompt.assemble()).sections.map((section) => section.name)

beforeEach(() => {
  root = new Context()
  dir = tempDir("effect-bash-harness-")
})
afterEach(async () => {
  // Disposing an already disposed fiber is a no-op.
  await Promise.all(loaded.map((fiber) => fiber.dispose()))
  loaded = []
  dir.remove()
})

describe("inside the harness", () => {
  describe("the bash tool", () => {
    beforeEach(async () => {
      await loadHarness()
      await loadPlugin()
    })

    it("renders a successful command's output", async () => {
      const result = await bash("echo hello")
      expect(result).toMatchObject({ isError: false, text: "hello\n" })
      expect(result.value).toMatchObject({ kind: "foreground", exitCode: 0, stdout: { text: "hello\n" } })
    })

    it("marks a non-zero exit without making it an error", async () => {
      expect(await bash("echo failing; exit 3")).toMatchObject({ isError: false, text: "failing\n[exit code: 3]" })
    })

    it("marks a timeout and the signal that ended the command", async () => {
      expect(await bash("sleep 5", { timeoutMs: 150 })).toMatchObject({
        isError: false,
        text: "(no output)\n[timed out after 150ms]\n[killed by signal: SIGTERM]"
      })
    })

    it("appends stderr after stdout", async () => {
      expect(await bash("echo out; echo err >&2")).toMatchObject({ isError: false, text: "out\n[stderr]\nerr\n" })
    })

    it("shows the tail of a truncated stream and links the complete spill file", async () => {
      const result = await bash("head -c 3000 /dev/zero | tr '\\0' a")
      const { stdout } = result.value as { stdout: { text: string; truncated: boolean; spillPath: string } }
      expect(stdout.truncated).toBe(true)
      expect(stdout.text).toBe("a".repeat(1_000))
      expect(readFileSync(stdout.spillPath, "utf8")).toBe("a".repeat(3_000))
      expect(result.text).toBe(`${"a".repeat(1_000)}\n[output truncated; full output: ${stdout.spillPath}]`)
    })

    it("answers invalid arguments with our exact messages", async () => {
      expect(await execute("bash", { description: "no command at all here" }, { session: "s1" })).toMatchObject({
        isError: true,
        text: "Error: invalid command: expected a non-empty string"
      })
      expect(await execute("bash", { command: "echo" }, { session: "s1" })).toMatchObject({
        isError: true,
        text: "Error: invalid description: expected a non-empty string"
      })
      expect(await bash("echo", { timeoutMs: -5 })).toMatchObject({
        isError: true,
        text: "Error: invalid timeoutMs: expected a positive number, got -5"
      })
      expect(await bash("echo", { sandbox_permissions: "workspace-write", justification: "needs it" })).toMatchObject({
        isError: true,
        text: "Error: sandbox_permissions is not available in this composition (no sandboxing executor to escalate)"
      })
    })

    it("turns an abort into the error `command aborted` and kills the command", async () => {
      const abort = new AbortController()
      const pidFile = join(dir.path, "aborted.pid")
      const running = execute("bash", {
        command: `echo $$ > ${pidFile}; sleep 10`,
        description: "sleep until it is aborted"
      }, { session: "s1", signal: abort.signal })
      const pgid = await readPid(pidFile)
      abort.abort()
      expect(await running).toMatchObject({ isError: true, text: "Error: command aborted" })
      expect(groupMembers(pgid)).toEqual([])
    })

    it("runs in the session's directory with the managed environment", async () => {
      const result = await bash("pwd; echo $DSH_SESSION_ID $DSH_SHELL")
      expect(result.text).toBe(`${realpathSync(dir.path)}\ns1 1\n`)
    })

    it("presents the call and the result as terminal cards, the result from the structured value", async () => {
      const result = await bash("echo card; exit 2")
      const tool = root.tools.get("bash")
      const args = { command: "echo card; exit 2", description: "run a shell command for the test" }
      expect(tool?.presentCall?.(args)).toEqual({
        card: "terminal",
        title: "echo card; exit 2",
        description: "run a shell command for the test"
      })
      expect(tool?.presentResult?.(args, { content: [], isError: false, meta: result.meta as never })).toEqual({
        card: "terminal",
        title: "echo card; exit 2",
        output: "card\n",
        exitCode: 2
      })
    })
  })

  describe("the task tools", () => {
    beforeEach(async () => {
      await loadHarness()
      await loadPlugin()
    })

    it("start, list, read and kill background tasks with the exact texts", async () => {
      expect(await bash("echo first", { run_in_background: true })).toMatchObject({
        isError: false,
        text: "started background task bash-1"
      })
      expect(await execute("task_output", { task_id: "bash-1", timeout_ms: 5_000 }, { session: "s1" })).toMatchObject({
        isError: false,
        text: "first\n[status: completed, exit code: 0]"
      })
      expect(await bash("sleep 30", { run_in_background: true })).toMatchObject({ text: "started background task bash-2" })
      expect(await execute("task_list", {}, { session: "s1" })).toMatchObject({
        isError: false,
        text: "bash-1 [bash] completed — echo first\nbash-2 [bash] running — sleep 30"
      })
      expect(await execute("task_kill", { task_id: "bash-2" }, { session: "s1" })).toMatchObject({
        isError: false,
        text: "requested cancellation of task bash-2"
      })
      expect(await execute("task_kill", { task_id: "bash-1" }, { session: "s1" })).toMatchObject({
        isError: false,
        text: "task bash-1 had already finished [status: completed, exit code: 0]"
      })
      expect(await execute("task_output", { task_id: "bash-2", timeout_ms: 5_000 }, { session: "s1" })).toMatchObject({
        isError: false,
        text: "(no new output)\n[status: killed, signal: SIGTERM]"
      })
    })

    it("keeps a session's tasks from other sessions and rejects bad ids", async () => {
      await bash("echo mine", { run_in_background: true })
      expect(await execute("task_output", { task_id: "bash-1", wait: false }, { session: "s2" })).toMatchObject({
        isError: true,
        text: "Error: task bash-1 belongs to another session"
      })
      expect(await execute("task_list", {}, { session: "s2" })).toMatchObject({ text: "(no background tasks)" })
      expect(await execute("task_kill", { task_id: "bash-9" }, { session: "s1" })).toMatchObject({
        isError: true,
        text: "Error: unknown task bash-9"
      })
      expect(await execute("task_output", { task_id: "" }, { session: "s1" })).toMatchObject({
        isError: true,
        text: `Error: invalid task_id: expected a non-empty string, got ""`
      })
    })
  })

  it("contributes the tool:bash prompt section at order 105", async () => {
    await loadHarness()
    await loadPlugin()
    // Assembled sections carry no order: place ours between neighbours at 104 and 106.
    root.systemPrompt.section({ name: "probe-104", order: 104, text: "before" })
    root.systemPrompt.section({ name: "probe-106", order: 106, text: "after" })
    const assembly = await root.systemPrompt.assemble()
    expect(assembly.sections.map((candidate) => candidate.name).filter((name) => /^(probe-|tool:bash$)/.test(name)))
      .toEqual(["probe-104", "tool:bash", "probe-106"])
    const section = assembly.sections.find((candidate) => candidate.name === "tool:bash")
    expect(section?.text).toContain("[exit code: N]")
    expect(assembly.tools.map((tool) => tool.name)).toEqual(["bash", "task_kill", "task_list", "task_output"])
  })

  it("follows a tool registry that loads after it, unloads and comes back", async () => {
    const plugin = await loadPlugin()
    await root.plugin(SystemPrompt)
    const registry = await root.plugin(ToolRuntime)
    expect(toolNames()).toContain("bash")
    expect(await sectionNames()).toContain("tool:bash")

    await registry.dispose()
    expect(root.get("tools")).toBeUndefined()

    await root.plugin(ToolRuntime)
    expect((await bash("echo back")).text).toBe("back\n")
    await plugin.dispose()
  })

  it("registers nothing with registerTools: false, while ctx.bash still works", async () => {
    await loadHarness()
    await loadPlugin({ registerTools: false })
    expect(toolNames()).toEqual([])
    expect(await sectionNames()).not.toContain("tool:bash")
    expect(root.get("bash")).toBeDefined()
  })

  it("exports DSH_SESSION_JSONL from the host's sessionPersistence service", async () => {
    await loadHarness()
    await root.plugin({
      name: "host-persistence",
      apply: (ctx: Context) => {
        ctx.provide("sessionPersistence", {
          locate: (session: { header: { id: string } }) => ({ kind: "jsonl", path: `/sessions/${session.header.id}.jsonl` })
        })
      }
    })
    await loadPlugin()
    expect((await bash("echo $DSH_SESSION_JSONL")).text).toBe("/sessions/s1.jsonl\n")
  })

  it("on dispose removes its tools and section and leaves nothing alive", async () => {
    await loadHarness()
    const plugin = await loadPlugin()
    const pidFile = join(dir.path, "task.pid")
    expect((await bash(termIgnoringCommand(pidFile), { run_in_background: true })).text).toBe(
      "started background task bash-1"
    )
    const pgid = await readPid(pidFile)
    expect(groupMembers(pgid)).not.toEqual([])

    const disposing = Date.now()
    await plugin.dispose()

    // Bounded by the 300 ms grace (TERM → KILL), not by the 30 s the TERM-ignoring task would run.
    expect(Date.now() - disposing).toBeLessThan(10_000)
    expect(groupMembers(pgid)).toEqual([])
    expect(toolNames()).toEqual([])
    expect(await sectionNames()).not.toContain("tool:bash")
    expect(await execute("bash", { command: "echo", description: "nothing is registered now" })).toMatchObject({
      isError: true,
      text: `Error: unknown tool "bash"`
    })
  })
})

describe.skipIf(!bwrapUsable)("the plugin with a sandbox, in the real harness", () => {
  it("advertises sandbox_permissions and renders the reference's texts for denied and allowed writes", async () => {
    await loadHarness()
    await loadPlugin({ sandbox: { mode: "read-only" } })
    const schema = root.tools.schemas().find((candidate) => candidate.name === "bash")
    expect(JSON.stringify(schema)).toContain("sandbox_permissions")
    expect((await bash("echo hi > file.txt")).text).toBe(
      "[stderr]\nbash: line 1: file.txt: Read-only file system\n" +
        "[sandbox: file access denied under read-only mode]\n" +
        "[sandbox: escalation available — retry this exact command once with sandbox_permissions (the narrowest wider mode that suffices) + justification; the approval prompt asks the user]\n" +
        "[exit code: 1]"
    )
    expect((await bash("echo hi > file.txt; echo rc=$?")).text).toBe(
      "rc=1\n[stderr]\nbash: line 1: file.txt: Read-only file system\n"
    )
    expect((await bash("echo hi > /dev/null && echo devnull-ok")).text).toBe("devnull-ok\n")
  })

  it("lets workspace-write write in the session's workspace only, and puts its policy in the prompt context", async () => {
    await loadHarness()
    await loadPlugin({ sandbox: { mode: "workspace-write" } })
    expect((await bash("echo hi > file.txt && cat file.txt")).text).toBe("hi\n")
    expect(readFileSync(join(dir.path, "file.txt"), "utf8")).toBe("hi\n")
    expect((await bash("echo hi > /etc/effect-bash-denied")).text).toContain(
      "[sandbox: file access denied under workspace-write mode]"
    )
    const assembly = await root.systemPrompt.assemble({ agent: agentFor("s1") } as never)
    expect(assembly.contexts).toContainEqual({
      name: "sandbox:policy",
      text: `Current DSH file policy: workspace-write. Any available operation enforced by the DSH file sandbox may modify files under the session workspace: ${JSON.stringify(realpathSync(dir.path))}. Some platform temporary areas may also be writable.`
    })
  })
})
