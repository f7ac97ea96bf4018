/**
 * The terminals' policy on a fake PTY with TestClock: the readiness tiers, silence, timeout, caps,
 * owner refusals, bounded output, the alternate screen, cancellation by SIGINT and close's
 * TERM → grace → KILL. No process starts, no real time passes.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Fiber, Layer, Option, TestClock } from "effect"
import * as TerminalsLive from "../../src/layers/TerminalsLive.js"
import { PtySpawner } from "../../src/services/PtySpawner.js"
import { Terminals } from "../../src/services/Terminals.js"
import * as FakeConfiningExecutor from "../../src/testing/FakeConfiningExecutor.js"
import * as FakePtySpawner from "../../src/testing/FakePtySpawner.js"

const owner = "s1"

const withFake = (fake: FakePtySpawner.FakePtySpawner, settings: TerminalsLive.Settings.Input = {}) =>
  TerminalsLive.layer(settings).pipe(Layer.provide(fake.layer))

/** Runs `effect` in a fiber while the TestClock advances `ms`, then joins it. */
const within = <A, E>(ms: number, effect: Effect.Effect<A, E, Terminals>) =>
  Effect.gen(function*() {
    const fiber = yield* Effect.fork(effect)
    yield* TestClock.adjust(ms)
    return yield* Fiber.join(fiber)
  })

const openShell = within(100, Effect.flatMap(Terminals, (t) => t.open(owner, { type: "shell" })))

const sendIn = (ms: number, id: string, text: string, submit = true) =>
  within(ms, Effect.flatMap(Terminals, (t) => t.send(owner, id, { text, submit })))

/** A shell that prints `out` for every submitted line, then its prompt. */
const answering = (out: (line: string) => string) =>
  FakePtySpawner.make({
    onWrite: (pty, data) => {
      pty.setForeground({ pgid: pty.pid + 1, readingInput: false })
      pty.emit(out(data))
      pty.prompt()
    }
  })

describe("confinement", () => {
  it.effect("a confining executor that cannot place a shell fails the layer: never unconfined", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(Layer.build(
        TerminalsLive.layer().pipe(
          Layer.provide(Layer.merge(FakePtySpawner.make().layer, FakeConfiningExecutor.layer({ sandboxMode: "read-only" })))
        )
      ))
      expect(error._op).toBe("Unsupported")
      expect(error.toString()).toContain(
        "bash-terminals: the executor confines its commands but cannot start terminals under the same rules; configure terminals without it"
      )
    }).pipe(Effect.scoped))
})

describe("opening", () => {
  it.effect("a terminal opens at its first prompt, with what the shell printed", () => {
    const fake = FakePtySpawner.make()
    return Effect.gen(function*() {
      const opened = yield* openShell
      expect(opened).toMatchObject({ id: "pty-1", type: "shell", owner, status: { kind: "running" } })
      expect(opened.startup).toContain("dsh> ")
      const env = fake.ptys[0]!.options.env
      expect(env.PS1).toBe("dsh> ")
      expect(env.DSH_PTY_SESSION_ID).toBe("pty-1")
    }).pipe(Effect.provide(withFake(fake)))
  })

  it.effect("a shell that never prompts fails the open at the startup timeout, and is closed", () => {
    const fake = FakePtySpawner.make({ onSpawn: () => {}, stubborn: false })
    return Effect.gen(function*() {
      const error = yield* Effect.flip(
        within(2_000, Effect.flatMap(Terminals, (t) => t.open(owner, { type: "shell" })))
      )
      expect(error.message).toBe("PTY shell did not reach readiness before startup timeout")
      expect(fake.ptys[0]!.alive()).toBe(0)
      expect(yield* Effect.flatMap(Terminals, (t) => t.list(owner))).toEqual([])
    }).pipe(Effect.provide(withFake(fake, { startupTimeoutMs: 1_000 })))
  })

  it.effect("the shell gets the executor's scrubbed environment, the managed DSH_* variables and its prompt", () => {
    const fake = FakePtySpawner.make()
    return Effect.gen(function*() {
      const terminals = yield* Terminals
      yield* within(
        100,
        terminals.open(owner, {
          type: "shell",
          env: { GREETING: "hi", PS1: "mine> " },
          dshEnv: { DSH_SESSION_ID: owner }
        })
      )
      const env = fake.ptys[0]!.options.env
      expect(env).toMatchObject({ GREETING: "hi", DSH_SESSION_ID: owner, PS1: "dsh> ", NO_COLOR: "1", HISTFILE: "" })
      expect(env.PATH).toBeUndefined()
      const refused = yield* Effect.flip(terminals.open(owner, { type: "shell", env: { DSH_HOME: "/x" } }))
      expect(refused.message).toBe(`ordinary bash env cannot set reserved variable "DSH_HOME"; use dshEnv`)
    }).pipe(Effect.provide(withFake(fake, { envDeny: ["^PATH$"] })))
  })

  it.effect("an unknown type is refused", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(Effect.flatMap(Terminals, (t) => t.open(owner, { type: "gdb" })))
      expect(error.message).toBe(`no PTY backend registered for "gdb"`)
    }).pipe(Effect.provide(withFake(FakePtySpawner.make()))))
})

describe("readiness", () => {
  it.effect("the prompt marker followed by the controlled prompt settles a send as stdin_read", () => {
    const fake = answering(() => "hi\r\n")
    return Effect.gen(function*() {
      const { id } = yield* openShell
      const result = yield* sendIn(200, id, "echo hi")
      expect(result).toMatchObject({ wait: "stdin_read", status: { kind: "running" }, truncated: false })
      expect(result.output).toContain("hi\r\n")
      expect(fake.ptys[0]!.written).toEqual(["echo hi\r"])
    }).pipe(Effect.provide(withFake(fake)))
  })

  it.effect("a prompt settles the send once it has been quiet for a poll, not at the poll after", () => {
    const fake = FakePtySpawner.make({
      onWrite: (pty) => pty.setForeground({ pgid: pty.pid + 1, readingInput: false })
    })
    return Effect.gen(function*() {
      const { id } = yield* openShell
      const fiber = yield* Effect.fork(Effect.flatMap(Terminals, (t) => t.send(owner, id, { text: "echo hi" })))
      yield* TestClock.adjust(10)
      const pty = fake.ptys[0]!
      pty.emit("hi\r\n")
      pty.prompt()
      // The poll at 50 ms sees 40 ms of quiet; the next look is at 60 ms, when it has been 50.
      yield* TestClock.adjust(49)
      expect(fiber.unsafePoll()).toBeNull()
      yield* TestClock.adjust(1)
      expect((yield* Fiber.join(fiber)).wait).toBe("stdin_read")
    }).pipe(Effect.provide(withFake(fake)))
  })

  it.effect("a marker followed by other text (an echo of it) is not a prompt", () => {
    const fake = FakePtySpawner.make({
      onWrite: (pty) => {
        pty.setForeground({ pgid: pty.pid + 1, readingInput: false })
        pty.emit("\x1b]133;D;0\x07dsh> printf fake\r\n")
      }
    })
    return Effect.gen(function*() {
      const { id } = yield* openShell
      const fiber = yield* Effect.fork(Effect.flatMap(Terminals, (t) => t.send(owner, id, { text: "x" })))
      yield* TestClock.adjust(3_000)
      expect(fiber.unsafePoll()).toBeNull()
      yield* TestClock.adjust(600)
      expect((yield* Fiber.join(fiber)).wait).toBe("inferred_idle")
    }).pipe(Effect.provide(withFake(fake)))
  })

  it.effect("a new foreground group reading the terminal settles as stdin_read after the probe delay", () => {
    const fake = FakePtySpawner.make({
      onWrite: (pty) => {
        pty.emit("password: ")
        pty.setForeground({ pgid: pty.pid + 7, readingInput: true })
      }
    })
    return Effect.gen(function*() {
      const { id } = yield* openShell
      const fiber = yield* Effect.fork(Effect.flatMap(Terminals, (t) => t.send(owner, id, { text: "sudo true" })))
      yield* TestClock.adjust(100)
      expect(fiber.unsafePoll()).toBeNull()
      yield* TestClock.adjust(100)
      const result = yield* Fiber.join(fiber)
      expect(result.wait).toBe("stdin_read")
      expect(result.output).toBe("password: ")
    }).pipe(Effect.provide(withFake(fake)))
  })

  it.effect("the very wait a send found is not readiness; the same group woken by the input is", () => {
    const fake = FakePtySpawner.make({ onWrite: () => {} })
    return Effect.gen(function*() {
      const { id } = yield* openShell
      const pty = fake.ptys[0]!
      pty.setForeground({ pgid: pty.pid + 3, readingInput: true })
      const fiber = yield* Effect.fork(Effect.flatMap(Terminals, (t) => t.send(owner, id, { text: "more" })))
      yield* TestClock.adjust(1_000)
      expect(fiber.unsafePoll()).toBeNull()
      pty.emit("more\r\n")
      pty.setForeground({ pgid: pty.pid + 3, readingInput: true })
      yield* TestClock.adjust(200)
      expect((yield* Fiber.join(fiber)).wait).toBe("stdin_read")
    }).pipe(Effect.provide(withFake(fake)))
  })

  it.effect("after a job, the shell asleep at its prompt settles only with the marker: the job's tail on its way is in the result", () => {
    const fake = FakePtySpawner.make({
      onWrite: (pty) => {
        pty.setForeground({ pgid: pty.pid + 1, readingInput: false })
        pty.emit("1\r\n2\r\n")
      }
    })
    return Effect.gen(function*() {
      const { id } = yield* openShell
      const pty = fake.ptys[0]!
      const fiber = yield* Effect.fork(Effect.flatMap(Terminals, (t) => t.send(owner, id, { text: "seq 1 3" })))
      yield* TestClock.adjust(100)
      // The job ended and the shell reads again; its last line and the prompt are still in the kernel.
      pty.setForeground({ pgid: pty.pid, readingInput: true })
      yield* TestClock.adjust(1_000)
      expect(fiber.unsafePoll()).toBeNull()
      pty.emit("3\r\n")
      pty.emit(FakePtySpawner.promptText)
      yield* TestClock.adjust(50)
      expect(yield* Fiber.join(fiber)).toMatchObject({ wait: "stdin_read", output: "1\r\n2\r\n3\r\ndsh> " })
    }).pipe(Effect.provide(withFake(fake)))
  })

  it.effect("a program that held the foreground at the send and ends there: the shell's wait after it waits for the marker", () => {
    const fake = FakePtySpawner.make({
      onWrite: (pty) => pty.setForeground({ pgid: pty.pid, readingInput: true })
    })
    return Effect.gen(function*() {
      const { id } = yield* openShell
      const pty = fake.ptys[0]!
      pty.setForeground({ pgid: pty.pid + 5, readingInput: true })
      const fiber = yield* Effect.fork(Effect.flatMap(Terminals, (t) => t.send(owner, id, { text: "exit()" })))
      yield* TestClock.adjust(1_000)
      expect(fiber.unsafePoll()).toBeNull()
      pty.emit(`bye\r\n${FakePtySpawner.promptText}`)
      yield* TestClock.adjust(50)
      expect(yield* Fiber.join(fiber)).toMatchObject({ wait: "stdin_read", output: "bye\r\ndsh> " })
    }).pipe(Effect.provide(withFake(fake)))
  })

  it.effect("the shell's own read with no job since the send settles on its wait (read -p)", () => {
    const fake = FakePtySpawner.make({
      onWrite: (pty) => {
        pty.emit("name? ")
        pty.setForeground({ pgid: pty.pid, readingInput: true })
      }
    })
    return Effect.gen(function*() {
      const { id } = yield* openShell
      const result = yield* sendIn(200, id, "read -p 'name? ' NAME")
      expect(result).toMatchObject({ wait: "stdin_read", output: "name? " })
    }).pipe(Effect.provide(withFake(fake)))
  })

  it.effect("a job, then the shell's own read: no marker comes, so it settles on silence", () => {
    const fake = FakePtySpawner.make({
      onWrite: (pty) => {
        pty.setForeground({ pgid: pty.pid + 1, readingInput: false })
        pty.emit("done\r\n")
      }
    })
    return Effect.gen(function*() {
      const { id } = yield* openShell
      const pty = fake.ptys[0]!
      const fiber = yield* Effect.fork(Effect.flatMap(Terminals, (t) => t.send(owner, id, { text: "make; read -p 'go? '" })))
      yield* TestClock.adjust(100)
      pty.emit("go? ")
      pty.setForeground({ pgid: pty.pid, readingInput: true })
      yield* TestClock.adjust(2_900)
      expect(fiber.unsafePoll()).toBeNull()
      yield* TestClock.adjust(200)
      expect(yield* Fiber.join(fiber)).toMatchObject({ wait: "inferred_idle", output: "done\r\ngo? " })
    }).pipe(Effect.provide(withFake(fake)))
  })

  it.effect("a wait is judged after the PTY's reader had its turn: output the kernel held at the look is in the result", () => {
    // What the program printed last, still in the kernel: the reader brings it in at its turn.
    let held = ""
    const fake = FakePtySpawner.make({
      onWrite: (pty) => {
        pty.emit("1\r\n")
        held = "2\r\nmore? "
        pty.setForeground({ pgid: pty.pid + 1, readingInput: true })
      }
    })
    const reading = Layer.effect(
      PtySpawner,
      Effect.map(PtySpawner, (inner) =>
        PtySpawner.of({
          spawn: (options) =>
            Effect.map(inner.spawn(options), (port) => ({
              ...port,
              catchUp: Effect.sync(() => {
                if (held !== "") fake.ptys.at(-1)!.emit(held)
                held = ""
              })
            }))
        }))
    ).pipe(Layer.provide(fake.layer))
    return Effect.gen(function*() {
      const { id } = yield* openShell
      const result = yield* sendIn(1_000, id, "ask")
      expect(result).toMatchObject({ wait: "stdin_read", output: "1\r\n2\r\nmore? " })
    }).pipe(Effect.provide(TerminalsLive.layer().pipe(Layer.provide(reading))))
  })

  it.effect("silence settles as inferred_idle at the bound, not before", () => {
    const fake = FakePtySpawner.make({
      onWrite: (pty) => {
        pty.setForeground({ pgid: pty.pid + 1, readingInput: false })
        pty.emit("working\r\n")
      }
    })
    return Effect.gen(function*() {
      const { id } = yield* openShell
      const fiber = yield* Effect.fork(Effect.flatMap(Terminals, (t) => t.send(owner, id, { text: "job" })))
      yield* TestClock.adjust(2_900)
      expect(fiber.unsafePoll()).toBeNull()
      yield* TestClock.adjust(200)
      expect(yield* Fiber.join(fiber)).toMatchObject({ wait: "inferred_idle", output: "working\r\n" })
    }).pipe(Effect.provide(withFake(fake)))
  })

  it.effect("a program that keeps printing settles at the absolute timeout", () => {
    const fake = FakePtySpawner.make({
      onWrite: (pty) => pty.setForeground({ pgid: pty.pid + 1, readingInput: false })
    })
    return Effect.gen(function*() {
      const { id } = yield* openShell
      const fiber = yield* Effect.fork(Effect.flatMap(Terminals, (t) => t.send(owner, id, { text: "yes" })))
      for (let i = 0; i < 4; i++) {
        fake.ptys[0]!.emit("y\r\n")
        yield* TestClock.adjust(1_000)
      }
      expect(fiber.unsafePoll()).toBeNull()
      for (let i = 0; i < 2; i++) {
        fake.ptys[0]!.emit("y\r\n")
        yield* TestClock.adjust(1_000)
      }
      const result = yield* Fiber.join(fiber)
      expect(result).toMatchObject({ wait: "timeout", status: { kind: "running" } })
    }).pipe(Effect.provide(withFake(fake, { timeoutMs: 5_000 })))
  })

  it.effect("the shell's exit settles as session_exit with its status", () => {
    const fake = FakePtySpawner.make({ onWrite: (pty) => pty.exit({ exitCode: 3, signal: null }) })
    return Effect.gen(function*() {
      const { id } = yield* openShell
      const result = yield* sendIn(100, id, "exit 3")
      expect(result).toMatchObject({ wait: "session_exit", status: { kind: "exited", exitCode: 3, signal: null } })
      const again = yield* Effect.flip(Effect.flatMap(Terminals, (t) => t.send(owner, id, { text: "x" })))
      expect(again.message).toBe("PTY session has exited")
    }).pipe(Effect.provide(withFake(fake)))
  })
})

describe("bounds", () => {
  it.effect("a send result keeps the newest maxReadBytes and says it was truncated", () => {
    const fake = answering(() => "x".repeat(5_000) + "END\r\n")
    return Effect.gen(function*() {
      const { id } = yield* openShell
      const result = yield* sendIn(200, id, "flood")
      expect(result.truncated).toBe(true)
      expect(result.output.length).toBeLessThanOrEqual(1_024)
      expect(result.output).toContain("END")
    }).pipe(Effect.provide(withFake(fake, { maxReadBytes: 1_024 })))
  })

  it.effect("the scrollback keeps its newest lines, paged back from the newest", () => {
    const fake = answering(() => Array.from({ length: 50 }, (_, i) => `line ${i}`).join("\r\n") + "\r\n")
    return Effect.gen(function*() {
      const terminals = yield* Terminals
      const { id } = yield* openShell
      yield* sendIn(200, id, "seq")
      const page = yield* terminals.read(owner, id, { offset: 1, count: 3 })
      expect(page).toMatchObject({ totalLines: 20, lineBegin: 1, lineEnd: 4, truncated: true })
      expect(page.text).toBe("line 47\r\nline 48\r\nline 49\r")
      const refused = yield* Effect.flip(terminals.read(owner, id, { count: 0 }))
      expect(refused.message).toBe("PTY read count must be a positive safe integer")
    }).pipe(Effect.provide(withFake(fake, { scrollbackLines: 20 })))
  })

  it.effect("a full-screen program is reported as on the alternate screen, its drawing withheld", () => {
    const fake = FakePtySpawner.make({
      onWrite: (pty) => {
        pty.emit("\x1b[?1049h\x1b[HSCREEN CONTENT")
        pty.setForeground({ pgid: pty.pid + 1, readingInput: true })
      }
    })
    return Effect.gen(function*() {
      const { id } = yield* openShell
      const result = yield* sendIn(300, id, "vim")
      expect(result.screen).toBe("alternate")
      expect(result.output).not.toContain("SCREEN CONTENT")
    }).pipe(Effect.provide(withFake(fake)))
  })
})

describe("backpressure", () => {
  /** `count` chunks of 1000 bytes, each named by its number, so order and loss show. */
  const chunks = (count: number) =>
    Array.from({ length: count }, (_, i) => `<${i}>`.padEnd(1_000, "."))

  /** A program that prints `count` chunks at once, then leaves its group `readingInput` (or not). */
  const flooding = (count: number, script: FakePtySpawner.Script & { readonly readingInput?: boolean } = {}) =>
    FakePtySpawner.make({
      ...script,
      onWrite: (pty) => {
        pty.setForeground({ pgid: pty.pid + 1, readingInput: script.readingInput ?? false })
        for (const chunk of chunks(count)) pty.emit(chunk)
      }
    })

  it.effect("a flood waits in the PTY while the terminal holds its budget: paused, resumed, nothing lost or reordered", () => {
    const fake = FakePtySpawner.make({
      onWrite: (pty) => {
        pty.setForeground({ pgid: pty.pid + 1, readingInput: false })
        for (const chunk of chunks(40)) pty.emit(chunk)
        pty.prompt()
      }
    })
    return Effect.gen(function*() {
      const { id } = yield* openShell
      const result = yield* sendIn(200, id, "flood")
      expect(result.wait).toBe("stdin_read")
      expect(result.output).toBe(chunks(40).join("") + "dsh> ")
      const flow = fake.ptys[0]!.flow()
      // 40 000 bytes through a 4 096-byte budget, read again at half: stopped many times, never left stopped.
      expect(flow.pauses).toBeGreaterThanOrEqual(10)
      expect(flow).toMatchObject({ paused: false, resumes: flow.pauses, waitingChunks: 0 })
    }).pipe(Effect.provide(withFake(fake, { outputBufferBytes: 4_096, maxReadBytes: 64 * 1024 })))
  })

  it.effect("output on its way from a stopped PTY is not silence: the send settles once it is all in", () => {
    // Each resume takes 10 s: the terminal falls behind while the rest waits in the PTY.
    const fake = flooding(3, { resumeDelayMs: 10_000 })
    return Effect.gen(function*() {
      const { id } = yield* openShell
      const fiber = yield* Effect.fork(Effect.flatMap(Terminals, (t) => t.send(owner, id, { text: "flood" })))
      yield* TestClock.adjust(15_000)
      expect(Option.isNone(yield* Fiber.poll(fiber))).toBe(true)
      expect(fake.ptys[0]!.flow().waitingChunks).toBe(1)
      yield* TestClock.adjust(20_000)
      const result = yield* Fiber.join(fiber)
      expect(result.wait).toBe("inferred_idle")
      expect(result.output).toBe(chunks(3).join(""))
    }).pipe(Effect.provide(withFake(fake, { outputBufferBytes: 1_000, idleSilenceMs: 3_000, timeoutMs: 60_000 })))
  })

  it.effect("a program waiting for input behind its own stopped output settles only once that output is in", () => {
    const fake = flooding(3, { resumeDelayMs: 10_000, readingInput: true })
    return Effect.gen(function*() {
      const { id } = yield* openShell
      const fiber = yield* Effect.fork(Effect.flatMap(Terminals, (t) => t.send(owner, id, { text: "flood" })))
      yield* TestClock.adjust(15_000)
      expect(Option.isNone(yield* Fiber.poll(fiber))).toBe(true)
      yield* TestClock.adjust(20_000)
      const result = yield* Fiber.join(fiber)
      expect(result.wait).toBe("stdin_read")
      expect(result.output).toBe(chunks(3).join(""))
    }).pipe(Effect.provide(withFake(fake, { outputBufferBytes: 1_000, idleSilenceMs: 3_000, timeoutMs: 60_000 })))
  })

  it.effect("a shell that exits behind its stopped output ends the send after all of it", () => {
    const fake = FakePtySpawner.make({
      resumeDelayMs: 1_000,
      onWrite: (pty) => {
        for (const chunk of chunks(5)) pty.emit(chunk)
        pty.exit({ exitCode: 0, signal: null })
      }
    })
    return Effect.gen(function*() {
      const { id } = yield* openShell
      const result = yield* sendIn(10_000, id, "flood; exit")
      expect(result).toMatchObject({ wait: "session_exit", status: { kind: "exited", exitCode: 0 } })
      expect(result.output).toBe(chunks(5).join(""))
    }).pipe(Effect.provide(withFake(fake, { outputBufferBytes: 1_000 })))
  })
})

describe("owners and caps", () => {
  it.effect("a terminal answers only its owner", () =>
    Effect.gen(function*() {
      const terminals = yield* Terminals
      const { id } = yield* openShell
      const foreign = yield* Effect.flip(terminals.send("s2", id, { text: "id" }))
      expect(foreign.message).toBe(`PTY session ${id} belongs to another agent`)
      expect((yield* Effect.flip(terminals.close("s2", id))).message).toBe(`PTY session ${id} belongs to another agent`)
      expect((yield* Effect.flip(terminals.read(owner, "pty-9", {}))).message).toBe("unknown PTY session pty-9")
      expect(yield* terminals.list("s2")).toEqual([])
    }).pipe(Effect.provide(withFake(FakePtySpawner.make()))))

  it.effect("per-session and per-layer caps refuse with their exact texts", () => {
    const fake = FakePtySpawner.make()
    return Effect.gen(function*() {
      const open = (who: string) => within(100, Effect.flatMap(Terminals, (t) => t.open(who, { type: "shell" })))
      yield* open("a")
      expect((yield* Effect.flip(open("a"))).message).toBe(
        "terminal limit reached: this session already has 1 open terminal sessions; close one with terminal_close first"
      )
      const b = yield* open("b")
      expect((yield* Effect.flip(open("c"))).message).toBe(
        "terminal limit reached: 2 terminal sessions are open on this host; close one with terminal_close first"
      )
      // A shell that exited still counts until it is closed.
      fake.ptys[1]!.exit()
      yield* TestClock.adjust(10)
      expect((yield* Effect.flip(open("c"))).message).toContain("terminal limit reached")
      yield* Effect.flatMap(Terminals, (t) => t.close("b", b.id))
      expect((yield* open("c")).id).toBe("pty-3")
    }).pipe(Effect.provide(withFake(fake, { maxPerSession: 1, maxTotal: 2 })))
  })
})

describe("caps under racing opens", () => {
  // A spawn that waits (node-pty loads on the first) lets opens overlap between the check and the spawn.
  const slow = () => FakePtySpawner.make({ spawnDelayMs: 50 })
  const openFor = (who: string, name?: string) =>
    Effect.either(Effect.flatMap(Terminals, (t) => t.open(who, { type: "shell", ...(name ? { name } : {}) })))

  it.effect("opens of one session racing through a slow spawn pass the per-session cap one at a time", () => {
    const fake = slow()
    return Effect.gen(function*() {
      const outcomes = yield* within(500, Effect.all([openFor("a"), openFor("a"), openFor("a")], { concurrency: "unbounded" }))
      expect(outcomes.filter((outcome) => outcome._tag === "Right")).toHaveLength(2)
      expect(outcomes.flatMap((outcome) => outcome._tag === "Left" ? [outcome.left.message] : [])).toEqual([
        "terminal limit reached: this session already has 2 open terminal sessions; close one with terminal_close first"
      ])
      expect(fake.ptys).toHaveLength(2)
    }).pipe(Effect.provide(withFake(fake, { maxPerSession: 2 })))
  })

  it.effect("opens of many sessions racing through a slow spawn pass the per-layer cap one at a time", () => {
    const fake = slow()
    return Effect.gen(function*() {
      const outcomes = yield* within(500, Effect.all(["a", "b", "c", "d"].map((who) => openFor(who)), { concurrency: "unbounded" }))
      expect(outcomes.filter((outcome) => outcome._tag === "Right")).toHaveLength(3)
      expect(outcomes.flatMap((outcome) => outcome._tag === "Left" ? [outcome.left.message] : [])).toEqual([
        "terminal limit reached: 3 terminal sessions are open on this host; close one with terminal_close first"
      ])
      expect(fake.ptys).toHaveLength(3)
    }).pipe(Effect.provide(withFake(fake, { maxTotal: 3 })))
  })

  it.effect("a name is held from the check on: a racing open of the same name is refused", () => {
    const fake = slow()
    return Effect.gen(function*() {
      const outcomes = yield* within(500, Effect.all([openFor("a", "main"), openFor("a", "main")], { concurrency: "unbounded" }))
      expect(outcomes.map((outcome) => outcome._tag === "Left" ? outcome.left.message : "opened")).toEqual([
        "opened",
        `PTY session name "main" already exists for this owner`
      ])
    }).pipe(Effect.provide(withFake(fake)))
  })

  it.effect("an open that fails gives its place back", () => {
    const fake = FakePtySpawner.make({ onSpawn: () => {}, spawnDelayMs: 50 })
    return Effect.gen(function*() {
      const failed = yield* within(2_000, openFor("a"))
      expect(failed._tag === "Left" && failed.left.message).toBe("PTY shell did not reach readiness before startup timeout")
      const again = yield* within(2_000, openFor("a"))
      expect(again._tag === "Left" && again.left.message).toBe("PTY shell did not reach readiness before startup timeout")
    }).pipe(Effect.provide(withFake(fake, { maxPerSession: 1, startupTimeoutMs: 1_000 })))
  })
})

describe("stopping", () => {
  it.effect("interrupting a send sends SIGINT to the foreground group, never a written ^C", () => {
    const fake = FakePtySpawner.make({
      onWrite: (pty) => pty.setForeground({ pgid: pty.pid + 5, readingInput: false })
    })
    return Effect.gen(function*() {
      const terminals = yield* Terminals
      const { id } = yield* openShell
      const fiber = yield* Effect.fork(terminals.send(owner, id, { text: "sleep 100" }))
      yield* TestClock.adjust(500)
      yield* Fiber.interrupt(fiber)
      const pty = fake.ptys[0]!
      expect(pty.signals.map(({ signal, target }) => ({ signal, target }))).toEqual([
        { signal: "SIGINT", target: pty.pid + 5 }
      ])
      expect(pty.written).toEqual(["sleep 100\r"])
      // The terminal is free for the next send.
      pty.setForeground({ pgid: pty.pid, readingInput: false })
      expect((yield* sendIn(4_000, id, "true")).wait).toBe("inferred_idle")
    }).pipe(Effect.provide(withFake(fake)))
  })

  it.effect("terminal_signal refuses SIGKILL to the shell itself", () =>
    Effect.gen(function*() {
      const terminals = yield* Terminals
      const { id, pid } = yield* openShell
      const refused = yield* Effect.flip(terminals.signal(owner, id, "SIGKILL"))
      expect(refused.message).toBe("refusing to SIGKILL the terminal shell; terminate the terminal session instead")
      expect(yield* terminals.signal(owner, id, "SIGINT")).toEqual({ pgid: pid })
    }).pipe(Effect.provide(withFake(FakePtySpawner.make()))))

  it.effect("close sends TERM and HUP, waits the grace on the Clock, then KILL", () => {
    const fake = FakePtySpawner.make({ stubborn: true })
    return Effect.gen(function*() {
      const terminals = yield* Terminals
      const { id, pid } = yield* openShell
      const start = fake.ptys[0]!.signals.length
      const fiber = yield* Effect.fork(terminals.close(owner, id))
      yield* TestClock.adjust(2_900)
      expect(fiber.unsafePoll()).toBeNull()
      yield* TestClock.adjust(200)
      expect(yield* Fiber.join(fiber)).toBe("closed")
      const sent = fake.ptys[0]!.signals.slice(start).map(({ signal, target, atMillis }) => ({
        signal,
        target,
        atMillis
      }))
      expect(sent).toEqual([
        { signal: "SIGTERM", target: "all", atMillis: 100 },
        { signal: "SIGHUP", target: pid, atMillis: 100 },
        { signal: "SIGKILL", target: "all", atMillis: 3_100 }
      ])
      expect(fake.ptys[0]!.alive()).toBe(0)
      expect(yield* terminals.list(owner)).toEqual([])
    }).pipe(Effect.provide(withFake(fake)))
  })

  it.effect("close hangs the shell up only once its other processes are gone (a runner's namespace ends with it)", () => {
    const fake = FakePtySpawner.make({ stubborn: true, children: 1, stubbornChildren: true })
    return Effect.gen(function*() {
      const terminals = yield* Terminals
      const { id, pid } = yield* openShell
      const start = fake.ptys[0]!.signals.length
      const fiber = yield* Effect.fork(terminals.close(owner, id))
      yield* TestClock.adjust(1_000)
      fake.ptys[0]!.endChildren()
      yield* TestClock.adjust(2_100)
      expect(yield* Fiber.join(fiber)).toBe("closed")
      const sent = fake.ptys[0]!.signals.slice(start).map(({ signal, target, atMillis }) => ({ signal, target, atMillis }))
      expect(sent).toEqual([
        { signal: "SIGTERM", target: "all", atMillis: 100 },
        // At the first poll (every 50 ms) after they ended.
        { signal: "SIGHUP", target: pid, atMillis: 1_150 },
        { signal: "SIGKILL", target: "all", atMillis: 3_100 }
      ])
    }).pipe(Effect.provide(withFake(fake)))
  })

  it.effect("closing the layer closes every terminal", () => {
    const fake = FakePtySpawner.make()
    return Effect.gen(function*() {
      yield* Effect.scoped(Effect.gen(function*() {
        const context = yield* Layer.build(withFake(fake))
        yield* Effect.provide(openShell, context)
        yield* Effect.provide(openShell, context)
      }))
      expect(fake.ptys.map((pty) => pty.alive())).toEqual([0, 0])
    })
  })
})
