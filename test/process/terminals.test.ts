/**
 * Terminals on real PTYs (node-pty) with real programs: prompts answered, REPLs, a flood, a
 * full-screen program, a shell that ends, owner isolation, and the stack's terminals (in a sandbox
 * too). What every executor must do alike is in terminals-executors.test.ts.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, HashMap, Layer, Logger, LogLevel, Option, Schedule } from "effect"
import { spawn } from "node:child_process"
import { once } from "node:events"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import * as NodeReadline from "node:readline"
import * as BashStack from "../../src/BashStack.js"
import * as NodePtySpawner from "../../src/layers/NodePtySpawner.js"
import * as TerminalsLive from "../../src/layers/TerminalsLive.js"
import { AgentTools } from "../../src/services/AgentTools.js"
import { Terminals } from "../../src/services/Terminals.js"
import { bwrapUsable } from "../support/bwrap.js"
import { containersWith, dockerUnavailable, testImage } from "../support/docker.js"
import { isAlive } from "../support/processes.js"

const layer = (settings: TerminalsLive.Settings.Input = {}) =>
  TerminalsLive.layer({ idleSilenceMs: 1_500, closeGraceMs: 1_000, ...settings }).pipe(
    Layer.provide(NodePtySpawner.layer)
  )

const owner = "session-a"

const shell = Effect.flatMap(Terminals, (terminals) => terminals.open(owner, { type: "shell" }))

const send = (id: string, text: string, submit = true) =>
  Effect.flatMap(Terminals, (terminals) => terminals.send(owner, id, { text, submit }))

const hasProgram = (name: string): boolean =>
  (process.env.PATH ?? "").split(":").some((dir) => NodeFs.existsSync(NodePath.join(dir, name)))

describe("interactive input", () => {
  it.live("read -p and read -s prompts are answered by the next send", () =>
    Effect.gen(function*() {
      const { id } = yield* shell
      const asked = yield* send(id, "read -p 'name? ' NAME; read -s -p 'secret? ' SECRET; echo; echo \"got $NAME/${#SECRET}\"")
      expect(asked.wait).toBe("stdin_read")
      expect(asked.output).toContain("name? ")
      const second = yield* send(id, "ada")
      expect(second.wait).toBe("stdin_read")
      expect(second.output).toContain("secret? ")
      const done = yield* send(id, "hunter2")
      expect(done.output).toContain("got ada/7")
      expect(done.output).not.toContain("hunter2")
    }).pipe(Effect.provide(layer())))

  it.live.skipIf(!hasProgram("python3"))("a python3 -i REPL keeps its state", () =>
    Effect.gen(function*() {
      const { id } = yield* shell
      const started = yield* send(id, "python3 -q -i")
      expect(started.output).toContain(">>> ")
      yield* send(id, "x = 6 * 7")
      const answer = yield* send(id, "print(x)")
      expect(answer.output).toContain("42")
      expect(answer.wait).not.toBe("timeout")
      const back = yield* send(id, "exit()")
      expect(back.output).toContain("dsh> ")
    }).pipe(Effect.provide(layer())))
})

describe("a node REPL", () => {
  it.live.skipIf(!hasProgram("node"))("node -i keeps its state across sends, each settled by its wait for input", () =>
    Effect.gen(function*() {
      const { id } = yield* shell
      // Node waits for the terminal in epoll (its loop watches the PTY): that is readiness, not silence.
      const started = yield* send(id, "node -i")
      expect(started).toMatchObject({ wait: "stdin_read" })
      expect(started.output).toContain("> ")
      expect((yield* send(id, "const x = 6 * 7")).wait).toBe("stdin_read")
      const answer = yield* send(id, "x + 1")
      expect(answer.output).toContain("43")
      expect(answer.wait).toBe("stdin_read")
      const back = yield* send(id, ".exit")
      expect(back.output).toContain("dsh> ")
      expect(back.wait).toBe("stdin_read")
    }).pipe(Effect.provide(layer({ idleSilenceMs: 10_000 }))))

  it.live.skipIf(!hasProgram("node"))("a node program that waits only for a timer is not waiting for input", () =>
    Effect.gen(function*() {
      const { id } = yield* shell
      const result = yield* send(id, "node -e 'setTimeout(() => console.log(\"timer done\"), 1000)'")
      expect(result.output).toContain("timer done")
      expect(result.wait).toBe("stdin_read")
      expect(result.output).toContain("dsh> ")
    }).pipe(Effect.provide(layer({ idleSilenceMs: 10_000 }))))
})

describe("stopping what runs", () => {
  it.live("a flood is bounded to the newest bytes", () =>
    Effect.gen(function*() {
      const { id } = yield* shell
      const result = yield* send(id, "seq 1 200000")
      expect(result.truncated).toBe(true)
      expect(Buffer.byteLength(result.output)).toBeLessThanOrEqual(16 * 1024)
      expect(result.output).toContain("200000")
      const terminals = yield* Terminals
      const page = yield* terminals.read(owner, id, { count: 10 })
      expect(page.truncated).toBe(true)
      expect(page.totalLines).toBeLessThanOrEqual(1_000)
      // The whole flood is in the transcript file the cut results name.
      expect(result.transcriptPath).toBeDefined()
      expect(page.transcriptPath).toBe(result.transcriptPath)
      const transcript = yield* Effect.retry(
        Effect.suspend(() => {
          const text = NodeFs.readFileSync(result.transcriptPath!, "utf8")
          return text.includes("\r\n200000\r\n") ? Effect.succeed(text) : Effect.fail("still being written")
        }),
        Schedule.intersect(Schedule.spaced("20 millis"), Schedule.recurs(250))
      )
      expect(transcript).toMatch(/^\x1b\[\?2004hdsh> seq 1 200000\r\n(?:\x1b\[\?2004l\r)?1\r\n2\r\n3\r\n/)
      yield* terminals.close(owner, id)
      expect(NodeFs.existsSync(result.transcriptPath!)).toBe(false)
    }).pipe(Effect.provide(layer({ maxReadBytes: 16 * 1024, scrollbackLines: 1_000 }))))
})

describe("backpressure", () => {
  /** The debug log a closed terminal leaves about its output flow: the most bytes held, the times the PTY was stopped. */
  const flowLogs = () => {
    const flows: Array<{ readonly highWater: number; readonly pauses: number }> = []
    const logger = Logger.make(({ annotations, message }) => {
      if (!String(message).endsWith("output flow")) return
      const get = (key: string) => Number(Option.getOrThrow(HashMap.get(annotations, key)))
      flows.push({ highWater: get("terminal.outputHighWaterBytes"), pauses: get("terminal.outputPauses") })
    })
    return { flows, layer: Layer.merge(Logger.replace(Logger.defaultLogger, logger), Logger.minimumLogLevel(LogLevel.Debug)) }
  }

  it.live("a flood through a one-byte budget: the PTY is stopped at every chunk, the host holds one chunk, the transcript all of it", () => {
    const { flows, layer: logs } = flowLogs()
    const lines = 300_000
    return Effect.gen(function*() {
      const terminals = yield* Terminals
      const { id } = yield* shell
      const result = yield* send(id, `seq 1 ${lines}`)
      expect(result.wait).toBe("stdin_read")
      expect(result.output).toContain(`\r\n${lines}\r\n`)
      const transcript = yield* Effect.retry(
        Effect.suspend(() => {
          const text = NodeFs.readFileSync(result.transcriptPath!, "utf8")
          return text.includes(`\r\n${lines}\r\n`) ? Effect.succeed(text) : Effect.fail("still being written")
        }),
        Schedule.intersect(Schedule.spaced("20 millis"), Schedule.recurs(250))
      )
      // Every line once, in order: nothing lost or reordered on its way through a PTY stopped at every chunk.
      const numbers = transcript.replace("\x1b[?2004l\r", "").split("\r\n").filter((line) => /^\d+$/.test(line))
      expect(numbers.length).toBe(lines)
      expect(numbers.every((line, index) => line === String(index + 1))).toBe(true)
      yield* terminals.close(owner, id)
      expect(flows).toHaveLength(1)
      // node-pty reads at most 64 KiB at a time (a UTF-8 character split across reads adds up to 3 bytes).
      expect(flows[0]!.highWater).toBeLessThanOrEqual(64 * 1024 + 3)
      expect(flows[0]!.pauses).toBeGreaterThanOrEqual(1)
    }).pipe(Effect.provide(Layer.merge(layer({ outputBufferBytes: 1, maxSpillBytes: 16 * 1024 * 1024 }), logs)))
  })
})

describe("full-screen programs", () => {
  it.live.skipIf(!hasProgram("vim"))("vim is reported on the alternate screen, and the prompt after it is normal", () =>
    Effect.gen(function*() {
      const { id } = yield* shell
      const opened = yield* send(id, "vim -u NONE -N")
      expect(opened.screen).toBe("alternate")
      const quit = yield* send(id, ":q!")
      expect(quit).toMatchObject({ screen: "normal", wait: "stdin_read" })
      expect(quit.output).toContain("dsh> ")
    }).pipe(Effect.provide(layer())))

  it.live.skipIf(!hasProgram("less"))("less on the alternate screen is reported as such", () =>
    Effect.gen(function*() {
      const { id } = yield* shell
      const result = yield* send(id, "seq 1 500 | less")
      expect(result.screen).toBe("alternate")
      expect(result.output).not.toContain("250")
      const back = yield* send(id, "q", false)
      expect(back.screen).toBe("normal")
    }).pipe(Effect.provide(layer())))
})

describe("a shell that ends", () => {
  it.live("a shell killed from inside settles the send as session_exit with its signal", () =>
    Effect.gen(function*() {
      const terminals = yield* Terminals
      const { id } = yield* shell
      const result = yield* send(id, "kill -9 $$")
      expect(result).toMatchObject({ wait: "session_exit", status: { kind: "exited", exitCode: null, signal: "SIGKILL" } })
      expect((yield* Effect.flip(send(id, "echo again"))).message).toBe("PTY session has exited")
      expect(yield* terminals.close(owner, id)).toBe("closed")
    }).pipe(Effect.provide(layer())))
})

describe("close leaves nothing running", () => {
  it.live("a terminal whose shell died keeps its device until closed: its close never reaches the next terminal", () =>
    Effect.gen(function*() {
      const terminals = yield* Terminals
      const first = yield* shell
      const deviceOf = (pid: number) => NodeFs.readlinkSync(`/proc/${pid}/fd/0`)
      const device = deviceOf(first.pid)
      expect((yield* send(first.id, "kill -9 $$")).wait).toBe("session_exit")
      const second = yield* shell
      expect(deviceOf(second.pid)).not.toBe(device)
      expect(yield* terminals.close(owner, first.id)).toBe("closed")
      const after = yield* send(second.id, "echo still here")
      expect(after.output).toContain("still here")
      expect(after.status).toEqual({ kind: "running" })
    }).pipe(Effect.provide(layer())))

  it.live.skipIf(!bwrapUsable || !hasProgram("python3"))(
    "close spares a process of another devpts whose terminal has the same name (a container's, a sandbox's)",
    () =>
      Effect.gen(function*() {
        const terminals = yield* Terminals
        const { id, pid } = yield* shell
        const pts = NodeFs.readlinkSync(`/proc/${pid}/fd/0`)
        const number = Number(/^\/dev\/pts\/(\d+)$/.exec(pts)?.[1])
        // In a devpts of its own, a process whose stdin is that instance's terminal of the same number.
        const stranger = yield* Effect.acquireRelease(
          Effect.sync(() =>
            spawn("bwrap", ["--dev-bind", "/", "/", "--dev", "/dev", "--", "python3", "-c",
              `import os, sys, time\nfds = [os.openpty() for _ in range(${number + 1})]\nos.dup2(fds[${number}][1], 0)\n` +
              `print(os.readlink("/proc/self/fd/0"), os.getpid(), flush=True)\ntime.sleep(600)`], { stdio: ["ignore", "pipe", "inherit"] })
          ),
          (child) => Effect.sync(() => child.kill("SIGKILL"))
        )
        // Its first line, whole: a pipe may hand it over in more than one chunk.
        const line = yield* Effect.promise(() => once(NodeReadline.createInterface({ input: stranger.stdout! }), "line"))
        const [link, strangerPid] = String(line[0]).trim().split(" ")
        expect(link).toBe(pts)
        expect(yield* terminals.close(owner, id)).toBe("closed")
        // Its /dev/pts/N is another device than the terminal's: not a process of the terminal.
        expect(isAlive(Number(strangerPid))).toBe(true)
      }).pipe(Effect.scoped, Effect.provide(layer()))
  )

  it.live("another session is refused, and the owner's terminal lists only for it", () =>
    Effect.gen(function*() {
      const terminals = yield* Terminals
      const { id } = yield* shell
      const refused = yield* Effect.flip(terminals.send("session-b", id, { text: "echo hi" }))
      expect(refused.message).toBe(`PTY session ${id} belongs to another agent`)
      expect(yield* terminals.list("session-b")).toEqual([])
      expect((yield* terminals.list(owner)).map((t) => t.id)).toEqual([id])
    }).pipe(Effect.provide(layer())))
})

describe("through the stack", () => {
  it.live("BashStack({ terminals: true }) serves the tools; the terminal has the managed DSH_* variables", () =>
    Effect.gen(function*() {
      const tools = yield* AgentTools
      const context = { callId: "c1", session: { id: "s-stack" } }
      const opened = yield* tools.callUnknown("terminal_open", { type: "shell" }, context)
      expect(opened.text).toMatch(/^started terminal session pty-1 \[type: shell\]\n/)
      const sent = yield* tools.callUnknown(
        "terminal_send",
        { sessionId: "pty-1", text: "echo \"$DSH_SESSION_ID $DSH_PTY_SESSION_ID $DSH_SHELL\"" },
        { ...context, callId: "c2" }
      )
      expect(sent.text).toContain("s-stack pty-1 1\n")
      expect(sent.text).toMatch(/\[wait: stdin_read\]\n\[session: running\]$/)
      const closed = yield* tools.callUnknown("terminal_close", { sessionId: "pty-1" }, { ...context, callId: "c3" })
      expect(closed.text).toBe("closed terminal session pty-1")
    }).pipe(Effect.provide(BashStack.layer({ terminals: { idleSilenceMs: 1_500 } }))))

  it.live("BashStack({ terminals, sandbox }) runs the terminal's shell in bubblewrap with the session's mode", () =>
    Effect.gen(function*() {
      const tools = yield* AgentTools
      const context = { callId: "c1", session: { id: "s-sandbox" } }
      yield* tools.callUnknown("terminal_open", { type: "shell" }, context)
      const sent = yield* tools.callUnknown(
        "terminal_send",
        { sessionId: "pty-1", text: "echo \"pid $$\"; touch /usr/effect-bash-escape" },
        { ...context, callId: "c2" }
      )
      expect(sent.text).toContain("pid 2\n")
      expect(sent.text).toMatch(/Read-only file system/)
      expect(NodeFs.existsSync("/usr/effect-bash-escape")).toBe(false)
    }).pipe(Effect.provide(BashStack.layer({ terminals: { idleSilenceMs: 1_500 }, sandbox: { sandboxMode: "read-only" } }))))

  it.live.skipIf(dockerUnavailable !== undefined)("BashStack({ terminals, container }) runs the terminal's shell in the session's box", () =>
    Effect.gen(function*() {
      const tools = yield* AgentTools
      const context = { callId: "c1", session: { id: `s-box-${process.pid}` } }
      yield* tools.callUnknown("terminal_open", { type: "shell" }, context)
      const sent = yield* tools.callUnknown(
        "terminal_send",
        { sessionId: "pty-1", text: "echo \"box $DSH_SESSION_ID $(cat /proc/1/cmdline | tr '\\0' ' ')\"" },
        { ...context, callId: "c2" }
      )
      expect(sent.text).toContain(`box s-box-${process.pid} /sbin/docker-init -- sleep infinity`)
      // The session's box is the one its bash calls run in.
      expect(containersWith({ "effect-bash.session": `s-box-${process.pid}` })).toHaveLength(1)
    }).pipe(Effect.provide(BashStack.layer({ terminals: { idleSilenceMs: 1_500 }, container: { image: testImage } }))))
})
