/**
 * The six terminal tools through AgentTools over a fake PTY: the reference's texts, model text
 * cleaned of escape sequences, the alternate screen named, owners refused, and a background send
 * read with task_output and stopped with task_kill (SIGINT to the foreground group).
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Fiber, Layer, TestClock } from "effect"
import * as TasksLive from "../../src/layers/TasksLive.js"
import * as TerminalsLive from "../../src/layers/TerminalsLive.js"
import { AgentTools } from "../../src/services/AgentTools.js"
import * as FakePtySpawner from "../../src/testing/FakePtySpawner.js"
import * as TerminalOpenTool from "../../src/tool/TerminalOpenTool.js"
import * as TerminalSendTool from "../../src/tool/TerminalSendTool.js"
import * as ScriptedBashExecutor from "../../src/testing/ScriptedBashExecutor.js"
import { type CallExtra, composeWith, textOf } from "../support/tools.js"

const s1 = { session: { id: "s1" } }
const s2 = { session: { id: "s2" } }

const layer = (
  fake: FakePtySpawner.FakePtySpawner,
  enableRunInBackground = true,
  settings: TerminalsLive.Settings.Input = {}
) =>
  composeWith({
    executor: ScriptedBashExecutor.layer(),
    services: Layer.merge(TasksLive.layer(), TerminalsLive.layer(settings).pipe(Layer.provide(fake.layer))),
    enableRunInBackground
  })

/** The text of a call while the TestClock advances `ms`. */
const textIn = (ms: number, name: string, args: unknown, extra: CallExtra = s1) =>
  Effect.gen(function*() {
    const fiber = yield* Effect.fork(textOf(name, args, extra))
    yield* TestClock.adjust(ms)
    return yield* Fiber.join(fiber)
  })

/** A shell that answers each line with colored output, a progress redraw and its prompt. */
const shell = () =>
  FakePtySpawner.make({
    onSpawn: (pty) => {
      pty.emit("\x1b[?2004h")
      pty.prompt()
    },
    onWrite: (pty, data) => {
      if (data === "less\r") {
        pty.emit("\x1b[?1049h\x1b[Hpage one")
        pty.setForeground({ pgid: pty.pid + 1, readingInput: true })
        return
      }
      if (data === "sleep 100\r") {
        pty.setForeground({ pgid: pty.pid + 2, readingInput: false })
        return
      }
      pty.setForeground({ pgid: pty.pid + 1, readingInput: false })
      pty.emit(`${data.replace("\r", "")}\r\n\x1b[32mgreen\x1b[0m\r\n10%\r50%\r100%\r\n`)
      pty.prompt()
    }
  })

describe("the terminal tools' texts", () => {
  it.effect("open, send, read, list and close answer with the reference's texts", () =>
    Effect.gen(function*() {
      const opened = yield* textIn(100, "terminal_open", { type: "shell", name: "main" })
      expect(opened).toBe("started terminal session pty-1 (main) [type: shell]\ndsh> ")
      const sent = yield* textIn(200, "terminal_send", { sessionId: "pty-1", text: "make" })
      expect(sent).toBe("make\ngreen\n100%\ndsh> \n[wait: stdin_read]\n[session: running]")
      const page = yield* textIn(0, "terminal_read", { sessionId: "pty-1", count: 2 })
      expect(page).toBe("100%\ndsh> \n[lines: 0-2 of 4]")
      expect(yield* textIn(0, "terminal_list", {})).toMatch(/^pty-1 \(main\) \[shell\] running pid=\d+$/)
      expect(yield* textIn(0, "terminal_close", { sessionId: "pty-1" })).toBe("closed terminal session pty-1")
      expect(yield* textIn(0, "terminal_list", {})).toBe("(no terminal sessions)")
    }).pipe(Effect.provide(layer(shell()))))

  it.effect("a full-screen program is named as such instead of its redraws", () =>
    Effect.gen(function*() {
      yield* textIn(100, "terminal_open", { type: "shell" })
      const sent = yield* textIn(300, "terminal_send", { sessionId: "pty-1", text: "less" })
      expect(sent).toBe(
        "(no new output)\n[screen: a full-screen program holds the terminal (alternate screen); its screen is not shown]" +
          "\n[wait: stdin_read]\n[session: running]"
      )
    }).pipe(Effect.provide(layer(shell()))))

  it.effect("another session's terminal is refused; bad arguments name the field", () =>
    Effect.gen(function*() {
      yield* textIn(100, "terminal_open", { type: "shell" })
      expect(yield* textIn(0, "terminal_send", { sessionId: "pty-1", text: "id" }, s2)).toBe(
        "Error: PTY session pty-1 belongs to another agent"
      )
      expect(yield* textIn(0, "terminal_send", { sessionId: "", text: "id" })).toBe(
        "Error: sessionId must be a non-empty string"
      )
      expect(yield* textIn(0, "terminal_send", { sessionId: 5, text: "id" })).toBe(
        "Error: invalid sessionId: expected a non-empty string, got 5"
      )
      expect(yield* textIn(0, "terminal_open", { type: "" })).toBe("Error: type must be a non-empty string")
      expect(yield* textIn(0, "terminal_signal", { sessionId: "pty-1", signal: "SIGUSR1" })).toBe(
        "Error: invalid signal: expected one of SIGINT, SIGTERM, SIGKILL, SIGTSTP, SIGHUP, got \"SIGUSR1\""
      )
    }).pipe(Effect.provide(layer(shell()))))

  it.effect("terminal_open past a cap answers the exact refusal, per session and per layer", () =>
    Effect.gen(function*() {
      const open = (session: string) => textIn(100, "terminal_open", { type: "shell" }, { session: { id: session } })
      expect(yield* open("s1")).toMatch(/^started terminal session pty-1 /)
      expect(yield* open("s1")).toBe(
        "Error: terminal limit reached: this session already has 1 open terminal sessions; close one with terminal_close first"
      )
      expect(yield* open("s2")).toMatch(/^started terminal session pty-2 /)
      expect(yield* open("s3")).toBe(
        "Error: terminal limit reached: 2 terminal sessions are open on this host; close one with terminal_close first"
      )
      expect(yield* textIn(100, "terminal_close", { sessionId: "pty-1" })).toBe("closed terminal session pty-1")
      expect(yield* open("s3")).toMatch(/^started terminal session pty-3 /)
    }).pipe(Effect.provide(layer(shell(), true, { maxPerSession: 1, maxTotal: 2 }))))

  it.effect("the six tools are published with the reference's parameters", () =>
    Effect.gen(function*() {
      const tools = yield* AgentTools
      const terminal = tools.tools.filter((tool) => tool.name.startsWith("terminal_"))
      expect(terminal.map((tool) => [tool.name, Object.keys(tool.parameters.properties ?? {})])).toEqual([
        ["terminal_open", ["type", "name", "cwd"]],
        ["terminal_send", ["sessionId", "text", "submit", "run_in_background"]],
        ["terminal_read", ["sessionId", "offset", "count"]],
        ["terminal_signal", ["sessionId", "signal"]],
        ["terminal_close", ["sessionId"]],
        ["terminal_list", []]
      ])
      expect(tools.promptSections.map((section) => section.name)).toContain("tool:pty")
    }).pipe(Effect.provide(layer(shell()))))

  it.effect("without background tasks run_in_background is unpublished and refused", () =>
    Effect.gen(function*() {
      const tools = yield* AgentTools
      const send = tools.tools.find((tool) => tool.name === "terminal_send")!
      expect(Object.keys(send.parameters.properties ?? {})).toEqual(["sessionId", "text", "submit"])
      yield* textIn(100, "terminal_open", { type: "shell" })
      expect(yield* textIn(0, "terminal_send", { sessionId: "pty-1", text: "x", run_in_background: true })).toBe(
        "Error: background terminal sends are disabled for this deployment"
      )
    }).pipe(Effect.provide(layer(shell(), false))))
})

describe("results are capped at 256 KiB", () => {
  it("an open keeps its acknowledgement and the newest startup output; a send keeps its markers", () => {
    const cap = 256 * 1024
    const opened = TerminalOpenTool.render({
      sessionId: "pty-1",
      type: "shell",
      pid: 1,
      status: { kind: "running" },
      motd: "é".repeat(cap) + "END"
    })
    expect(opened.startsWith("started terminal session pty-1 [type: shell]\n")).toBe(true)
    expect(opened.endsWith("END\n[output truncated]")).toBe(true)
    expect(Buffer.byteLength(opened)).toBeLessThanOrEqual(cap)
    const sent = TerminalSendTool.render({
      kind: "foreground",
      viewport: "x".repeat(cap) + "END",
      waitReason: "timeout",
      sessionStatus: { kind: "running" },
      truncated: false,
      screen: "normal"
    })
    expect(sent.endsWith("END\n[wait: timeout]\n[session: running]\n[output truncated]")).toBe(true)
    expect(Buffer.byteLength(sent)).toBe(cap)
  })
})

describe("where a terminal starts", () => {
  it.effect("in the session's working directory; a relative cwd is taken from it", () => {
    const fake = shell()
    return Effect.gen(function*() {
      const session = { session: { id: "s1", cwd: "/ws" } }
      yield* textIn(100, "terminal_open", { type: "shell" }, session)
      yield* textIn(100, "terminal_open", { type: "shell", cwd: "sub" }, session)
      expect(fake.ptys.map((pty) => pty.options.cwd)).toEqual(["/ws", "/ws/sub"])
    }).pipe(Effect.provide(layer(fake)))
  })
})

describe("a background send is a task", () => {
  it.effect("task_output reads it; task_kill sends SIGINT to the foreground group", () => {
    const fake = shell()
    return Effect.gen(function*() {
      yield* textIn(100, "terminal_open", { type: "shell" })
      const started = yield* textIn(0, "terminal_send", { sessionId: "pty-1", text: "sleep 100", run_in_background: true })
      expect(started).toBe("started background task terminal-1")
      yield* TestClock.adjust(500)
      const pty = fake.ptys[0]!
      expect(yield* textIn(0, "task_kill", { task_id: "terminal-1" })).toBe("requested cancellation of task terminal-1")
      expect(pty.signals.map(({ signal, target }) => ({ signal, target }))).toEqual([
        { signal: "SIGINT", target: pty.pid + 2 }
      ])
      pty.emit("^C\r\n")
      pty.prompt()
      const output = yield* textIn(200, "task_output", { task_id: "terminal-1" })
      expect(output).toContain("^C\ndsh> ")
      expect(output).toContain("killed")
    }).pipe(Effect.provide(layer(fake)))
  })
})
