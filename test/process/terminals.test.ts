/**
 * Terminals on real PTYs (node-pty) with real programs: shell state across sends, prompts answered,
 * a REPL, interruption by a real SIGINT, a program that never returns, a flood, a full-screen
 * program, `setsid` children gone after close, owner isolation, and nothing left running.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Schedule } from "effect"
import * as NodeFs from "node:fs"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"
import * as BashStack from "../../src/BashStack.js"
import * as NodePtySpawner from "../../src/layers/NodePtySpawner.js"
import * as TerminalsLive from "../../src/layers/TerminalsLive.js"
import { AgentTools } from "../../src/services/AgentTools.js"
import { Terminals } from "../../src/services/Terminals.js"
import { commandLineOf } from "../support/processes.js"

const layer = (settings: TerminalsLive.Settings.Input = {}) =>
  TerminalsLive.layer({ idleSilenceMs: 1_500, closeGraceMs: 1_000, ...settings }).pipe(
    Layer.provide(NodePtySpawner.layer)
  )

const owner = "session-a"

const shell = Effect.flatMap(Terminals, (terminals) => terminals.open(owner, { type: "shell" }))

const send = (id: string, text: string, submit = true) =>
  Effect.flatMap(Terminals, (terminals) => terminals.send(owner, id, { text, submit }))

const isAlive = (pid: number): boolean => {
  try {
    const stat = NodeFs.readFileSync(`/proc/${pid}/stat`, "latin1")
    const state = stat.slice(stat.lastIndexOf(")") + 2)[0]
    return state !== "Z" && state !== "X"
  } catch {
    return false
  }
}

const foregroundOf = (pid: number): number => {
  const stat = NodeFs.readFileSync(`/proc/${pid}/stat`, "latin1")
  return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[5])
}

const hasProgram = (name: string): boolean =>
  (process.env.PATH ?? "").split(":").some((dir) => NodeFs.existsSync(NodePath.join(dir, name)))

describe("a terminal keeps its shell's state across sends", () => {
  it.live("cd and variables persist; the prompt settles each send as stdin_read", () =>
    Effect.gen(function*() {
      const dir = NodeFs.mkdtempSync(NodePath.join(NodeOs.tmpdir(), "term-"))
      const opened = yield* shell
      expect(opened.id).toBe("pty-1")
      expect(opened.startup).toContain("dsh> ")
      yield* send(opened.id, `cd ${dir} && export GREETING=hello`)
      const result = yield* send(opened.id, "echo \"$GREETING from $(pwd)\"")
      expect(result.wait).toBe("stdin_read")
      expect(result.status).toEqual({ kind: "running" })
      expect(result.output).toContain(`hello from ${dir}`)
      NodeFs.rmSync(dir, { recursive: true })
    }).pipe(Effect.provide(layer())))
})

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
  it.live("terminal_signal interrupts the foreground job with a real SIGINT", () =>
    Effect.gen(function*() {
      const terminals = yield* Terminals
      const { id, pid } = yield* shell
      const running = yield* send(id, "sleep 600", true).pipe(Effect.timeout("300 millis"), Effect.option)
      expect(running._tag).toBe("None")
      // The interrupted send already sent SIGINT; once the shell has its terminal back (else the signal
      // below could reach the dying first sleep), start another to signal explicitly.
      yield* Effect.retry(
        Effect.suspend(() => foregroundOf(pid) === pid ? Effect.void : Effect.fail("the first sleep in the foreground")),
        Schedule.intersect(Schedule.spaced("20 millis"), Schedule.recurs(250))
      )
      const operation = yield* terminals.startSend(owner, id, { text: "sleep 601" })
      // Signal once sleep itself holds the foreground (the shell's tpgid in /proc, its leader exec'd):
      // a signal to the forked child before its exec may not end the sleep it becomes.
      yield* Effect.retry(
        Effect.suspend(() => commandLineOf(foregroundOf(pid)) === "sleep 601" ? Effect.void : Effect.fail("sleep not yet in the foreground")),
        Schedule.intersect(Schedule.spaced("20 millis"), Schedule.recurs(250))
      )
      const { pgid } = yield* terminals.signal(owner, id, "SIGINT")
      expect(pgid).not.toBe(pid)
      const result = yield* operation.done
      // The job is gone: the shell has its terminal back and showed its prompt.
      expect(foregroundOf(pid)).toBe(pid)
      expect(result.output).toContain("dsh> ")
      expect(result.wait).toBe("stdin_read")
    }).pipe(Effect.provide(layer())))

  it.live("a cancelled send stops its command with a real SIGINT; the shell is ready for the next", () =>
    Effect.gen(function*() {
      const { id, pid } = yield* shell
      const sleeps = () =>
        NodeFs.readdirSync("/proc").filter((entry) => /^\d+$/.test(entry)).map(Number).filter((p) =>
          commandLineOf(p) === "sleep 612" && isAlive(p)
        )
      const cancelled = yield* send(id, "sleep 612").pipe(Effect.timeout("1 second"), Effect.option)
      expect(cancelled._tag).toBe("None")
      // The sleep is gone and the shell has its terminal back.
      yield* Effect.retry(
        Effect.suspend(() => sleeps().length === 0 && foregroundOf(pid) === pid ? Effect.void : Effect.fail("running")),
        Schedule.intersect(Schedule.spaced("20 millis"), Schedule.recurs(250))
      )
      const next = yield* send(id, "echo after")
      expect(next.output).toContain("after")
      expect(next.wait).toBe("stdin_read")
    }).pipe(Effect.provide(layer())))

  it.live("a program that never returns settles at the timeout, still running", () =>
    Effect.gen(function*() {
      const { id } = yield* shell
      const result = yield* send(id, "while :; do echo tick; sleep 0.2; done")
      expect(result.wait).toBe("timeout")
      expect(result.status).toEqual({ kind: "running" })
      expect(result.output).toContain("tick")
    }).pipe(Effect.provide(layer({ timeoutMs: 1_500 }))))

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
      expect((yield* Effect.flip(send(id, "echo again"))).message).toBe(`PTY session ${id} has exited`)
      expect(yield* terminals.close(owner, id)).toBe("closed")
    }).pipe(Effect.provide(layer())))
})

describe("close leaves nothing running", () => {
  it.live("setsid children that left the session are gone after close", () =>
    Effect.gen(function*() {
      const terminals = yield* Terminals
      const { id, pid } = yield* shell
      const started = yield* send(id, "setsid sleep 9137 & sleep 9138 & echo pids $!")
      expect(started.output).toContain("pids")
      const children = NodeFs.readdirSync("/proc").filter((entry) => /^\d+$/.test(entry)).map(Number).filter((p) => {
        try {
          return /^sleep\u0000913[78]\u0000$/.test(NodeFs.readFileSync(`/proc/${p}/cmdline`, "latin1"))
        } catch {
          return false
        }
      })
      expect(children).toHaveLength(2)
      expect(yield* terminals.close(owner, id)).toBe("closed")
      expect(isAlive(pid)).toBe(false)
      expect(children.filter(isAlive)).toEqual([])
      expect(yield* terminals.list(owner)).toEqual([])
    }).pipe(Effect.provide(layer())))

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

  it.live("terminals with a sandbox are refused: they are not confined yet", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(Layer.build(BashStack.layer({ terminals: true, sandbox: { sandboxMode: "read-only" } })))
      expect(error.message).toBe(
        "bash-terminals: terminals are not confined yet; configure them without sandbox or container"
      )
    }).pipe(Effect.scoped))
})
