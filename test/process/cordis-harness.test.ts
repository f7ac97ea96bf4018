/**
 * The adapter inside the real harness: `@deepseek-ai/cordis` 4.0.4 with `SystemPrompt` then
 * `ToolRuntime`, then our plugin. Calls go through the harness's own `ctx.tools.execute`, so every
 * text below is exactly what a model would see.
 */
import { readFileSync, realpathSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { Context } from "@deepseek-ai/cordis"
import { SystemPrompt } from "@deepseek-ai/dsh-system-prompt"
import ToolRuntime from "@deepseek-ai/dsh-tools"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import EffectBash from "../../src/cordis-adapter.js"
import type { CordisTasks } from "../../src/cordis-adapter.js"
import * as BashTool from "../../src/tool/BashTool.js"
import { noticePromise } from "../../src/tool/internal/bashPrompt.js"
import { eventually, readPid, tempDir, termIgnoringCommand } from "../support/cordis.js"
import { liveMembers } from "../support/processes.js"
import { bwrapUsable } from "../support/bwrap.js"

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
  options: { readonly session?: string; readonly signal?: AbortSignal; readonly agent?: object } = {}
): Promise<Outcome> => {
  const agent = options.agent ?? (options.session === undefined ? undefined : agentFor(options.session))
  const result = await root.tools.execute({
    callId: `call-${++calls}` as never,
    name,
    arguments: args,
    signal: options.signal ?? new AbortController().signal,
    // The registry and our tool read only the session header and the notice lanes of the agent.
    ...(agent === undefined ? {} : { agent: agent as never })
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
      expect(liveMembers(pgid)).toEqual([])
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
    expect(liveMembers(pgid)).not.toEqual([])

    const disposing = Date.now()
    await plugin.dispose()

    // Bounded by the 300 ms grace (TERM → KILL), not by the 30 s the TERM-ignoring task would run.
    expect(Date.now() - disposing).toBeLessThan(10_000)
    expect(liveMembers(pgid)).toEqual([])
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

describe("completion notices through the harness agent", () => {
  interface Delivery {
    readonly lane: "inject" | "followup"
    readonly message: {
      readonly id: string
      readonly role: string
      readonly content: ReadonlyArray<{ readonly type: string; readonly text: string }>
      readonly source: Record<string, unknown>
    }
  }

  /** A harness agent handle (`Agent` of dsh-agent, as far as a tool call carries it) that records its lanes. */
  const recordingAgent = (id: string, status: "idle" | "running") => {
    const delivered: Array<Delivery> = []
    const agent = {
      id,
      session: { header: { id, cwd: dir.path } },
      status,
      inject: (message: Delivery["message"]) => void delivered.push({ lane: "inject", message }),
      followup: (message: Delivery["message"]) => void delivered.push({ lane: "followup", message })
    }
    return { agent, delivered }
  }

  const notice = (id: string, label: string) =>
    `background task ${id} (bash: ${label}) finished [status: completed, exit code: 0]. Read its output with task_output.`

  const startFor = async (agent: object, command: string) =>
    (await execute("bash", { command, description: "run it in the background", run_in_background: true }, { agent }))
      .text

  /** Starts a background command and waits until its notice has been delivered (it finishes at once). */
  const finishFor = async (recording: ReturnType<typeof recordingAgent>, command: string) => {
    const before = recording.delivered.length
    await startFor(recording.agent, command)
    return eventually(() => recording.delivered[before])
  }

  /** The harness's `agent/inbox/claimed` event (dsh-agent emits it as an agent claims a message). */
  const claim = (agent: object, kind: "user" | "plugin") =>
    (root as unknown as { emit(name: string, payload: unknown): void }).emit("agent/inbox/claimed", {
      agent,
      message: { id: `m-${kind}`, role: "user", content: [], source: kind === "user" ? { kind } : { kind, plugin: "other" } },
      turn: 1
    })

  beforeEach(async () => {
    await loadHarness()
  })

  it("injects into a running agent one frozen notice message with the exact text, once", async () => {
    await loadPlugin()
    const owner = recordingAgent("s1", "running")
    expect(await startFor(owner.agent, "echo done")).toBe("started background task bash-1")
    const { lane, message } = await eventually(() => owner.delivered[0])
    expect(lane).toBe("inject")
    expect(message).toEqual({
      id: expect.stringMatching(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/),
      role: "user",
      content: [{ type: "text", text: notice("bash-1", "echo done") }],
      source: {
        kind: "plugin",
        plugin: "effect-bash",
        form: "notice",
        summary: "background task bash-1 finished [status: completed, exit code: 0] — echo done"
      }
    })
    expect([message, message.content, message.content[0], message.source].every(Object.isFrozen)).toBe(true)
    // Exactly once: later calls of the session deliver nothing more, and the text is the task's own.
    expect((await execute("task_list", {}, { agent: owner.agent })).text).toBe("bash-1 [bash] completed — echo done")
    const second = await finishFor(owner, "echo again")
    expect(second.message.content[0]?.text).toBe(notice("bash-2", "echo again"))
    expect(second.message.id).not.toBe(message.id)
    expect(owner.delivered).toHaveLength(2)
  })

  it("wakes an idle agent with a follow-up, three times in a row at most; a user-authored claim refills the budget", async () => {
    await loadPlugin()
    const owner = recordingAgent("s1", "idle")
    const lanes = []
    for (const n of [1, 2, 3, 4]) lanes.push((await finishFor(owner, `echo ${n}`)).lane)
    expect(lanes).toEqual(["followup", "followup", "followup", "inject"])
    // A claimed notice (plugin-authored) is no user input: the budget stays spent.
    claim(owner.agent, "plugin")
    expect((await finishFor(owner, "echo 5")).lane).toBe("inject")
    claim(owner.agent, "user")
    expect((await finishFor(owner, "echo 6")).lane).toBe("followup")
    expect(owner.delivered.map((delivery) => delivery.message.content[0]?.text)).toEqual(
      [1, 2, 3, 4, 5, 6].map((n) => notice(`bash-${n}`, `echo ${n}`))
    )
  })

  it("keeps each owner's budget and notices apart", async () => {
    await loadPlugin()
    const first = recordingAgent("s1", "idle")
    const second = recordingAgent("s2", "idle")
    for (const n of [1, 2, 3]) await finishFor(first, `echo ${n}`)
    expect((await finishFor(second, "echo other")).lane).toBe("followup")
    expect(second.delivered.map((delivery) => delivery.message.content[0]?.text)).toEqual([notice("bash-4", "echo other")])
    expect(first.delivered).toHaveLength(3)
  })

  it("only injects under completionDelivery: 'quiet', even into an idle agent", async () => {
    await loadPlugin({ completionDelivery: "quiet" })
    const owner = recordingAgent("s1", "idle")
    expect((await finishFor(owner, "echo quiet")).lane).toBe("inject")
  })

  it("delivers nothing for a task whose final status task_output already showed", async () => {
    await loadPlugin()
    const owner = recordingAgent("s1", "running")
    await startFor(owner.agent, "sleep 0.2; echo late")
    expect((await execute("task_output", { task_id: "bash-1", timeout_ms: 5_000 }, { agent: owner.agent })).text).toBe(
      "late\n[status: completed, exit code: 0]"
    )
    // The next task's notice arrives, and it is the only one.
    expect((await finishFor(owner, "echo next")).message.content[0]?.text).toBe(notice("bash-2", "echo next"))
    expect(owner.delivered).toHaveLength(1)
  })

  it("holds a notice while a call of its session runs, and delivers it when the last one ends", async () => {
    await loadPlugin()
    const owner = recordingAgent("s1", "running")
    // The session stays busy until the test lets the call end.
    const go = join(dir.path, "go")
    const busy = execute(
      "bash",
      { command: `until [ -e '${go}' ]; do sleep 0.02; done`, description: "keep the session busy", timeoutMs: 30_000 },
      { agent: owner.agent }
    )
    await startFor(owner.agent, "echo quick")
    await (root.get("tasks") as CordisTasks).wait("bash-1", 5_000, "s1")
    expect(owner.delivered).toEqual([])
    writeFileSync(go, "")
    await busy
    expect(owner.delivered.map((delivery) => delivery.message.content[0]?.text)).toEqual([notice("bash-1", "echo quick")])
  })

  it("delivers nothing once the plugin is unloading", async () => {
    const plugin = await loadPlugin()
    const owner = recordingAgent("s1", "running")
    const busy = execute("bash", { command: "sleep 30", description: "keep the session busy" }, { agent: owner.agent })
    await startFor(owner.agent, "echo quick")
    await (root.get("tasks") as CordisTasks).wait("bash-1", 5_000, "s1")
    expect(owner.delivered).toEqual([])
    await plugin.dispose()
    // The busy call was cut short by the unload; its end would otherwise deliver the held notice.
    expect((await busy).text).toBe("Error: effect-bash: the plugin has been unloaded")
    expect(owner.delivered).toEqual([])
  })

  it("leaves an agent without the notice lanes as before", async () => {
    await loadPlugin()
    await startFor(agentFor("s1"), "echo plain")
    const tasks = root.get("tasks") as CordisTasks
    await tasks.wait("bash-1", 5_000, "s1")
    expect((await execute("task_output", { task_id: "bash-1", wait: false }, { session: "s1" })).text).toBe(
      "plain\n[status: completed, exit code: 0]"
    )
  })

  it("promises notices in the prompt only to agents it delivers to; the plain text is unchanged", async () => {
    await loadPlugin()
    const textFor = async (agent?: object) =>
      (await root.systemPrompt.assemble(agent === undefined ? {} : { agent } as never)).sections
        .find((section) => section.name === "tool:bash")?.text
    const plain = BashTool.promptSection.text
    expect(await textFor()).toBe(plain)
    expect(await textFor(agentFor("s1"))).toBe(plain)
    expect(await textFor(recordingAgent("s1", "idle").agent)).toBe(`${plain} ${noticePromise}`)
    expect(root.tools.get("bash")?.description).toBe(BashTool.description({ background: true, sandbox: false, escalation: false }))
  })

  it("promises nothing when background tasks are disabled", async () => {
    await loadPlugin({ enableRunInBackground: false })
    const sections = (await root.systemPrompt.assemble({ agent: recordingAgent("s1", "idle").agent } as never)).sections
    expect(sections.find((section) => section.name === "tool:bash")?.text).toBe(BashTool.promptSection.text)
  })
})
