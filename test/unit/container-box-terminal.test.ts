/**
 * A terminal's PTY in a box, on a scripted engine with TestClock: the TTY is sized before the shell
 * starts, the probe's answers become the terminal's facts and signals, and every wait on the box (the
 * shell's start, each answer, the probe's exit on close) is bounded on the Clock. No engine, no process.
 */
import { afterAll, describe, expect, it } from "@effect/vitest"
import { Context, Effect, Exit, Fiber, Layer, Queue, Scope, TestClock } from "effect"
import * as DockerBashExecutor from "../../src/layers/DockerBashExecutor.js"
import * as TerminalsLive from "../../src/layers/TerminalsLive.js"
import type { Box } from "../../src/layers/internal/container/Boxes.js"
import { makeBoxTerminals } from "../../src/layers/internal/container/boxTerminal.js"
import type { ContainerEngine } from "../../src/services/ContainerEngine.js"
import type { PtySpawner } from "../../src/services/PtySpawner.js"
import { Terminals } from "../../src/services/Terminals.js"
import * as FakeContainerEngine from "../../src/testing/FakeContainerEngine.js"
import * as FakePtySpawner from "../../src/testing/FakePtySpawner.js"
import { tempDirs } from "../support/tempDirs.js"

const dirs = tempDirs("effect-bash-box-terminal")
afterAll(dirs.removeAll)

/** One exec the scripted engine started: what was written and sized, in order, and its output to feed. */
interface ScriptedExec {
  readonly argv: ReadonlyArray<string>
  readonly tty: boolean
  readonly events: Array<string>
  readonly inputs: Queue.Queue<string>
  readonly output: Queue.Queue<ContainerEngine.Frame | undefined>
  closed: boolean
}

const frame = (text: string): ContainerEngine.Frame => ({ stream: "stdout", bytes: Buffer.from(text) })

const scripted = Effect.gen(function*() {
  const created = yield* Queue.unbounded<ScriptedExec>()
  let released = 0
  const engine = {
    exec: (_box: string, options: ContainerEngine.ExecOptions) =>
      Effect.gen(function*() {
        const exec: ScriptedExec = {
          argv: options.argv,
          tty: options.tty === true,
          events: [],
          inputs: yield* Queue.unbounded<string>(),
          output: yield* Queue.unbounded<ContainerEngine.Frame | undefined>(),
          closed: false
        }
        yield* Queue.offer(created, exec)
        const session: ContainerEngine.ExecSession = {
          sendInput: () => Effect.void,
          write: (bytes) =>
            Effect.suspend(() => {
              const text = Buffer.from(bytes).toString("utf8")
              exec.events.push(`write ${JSON.stringify(text)}`)
              return Queue.offer(exec.inputs, text)
            }),
          next: Effect.flatMap(Queue.take(exec.output), (next) =>
            // The end stays the end for every later read.
            next === undefined ? Effect.as(Queue.offer(exec.output, undefined), undefined) : Effect.succeed(next)),
          exitCode: Effect.succeed(0),
          close: Effect.sync(() => {
            exec.closed = true
          }),
          ...(options.tty === true
            ? { resize: (rows: number, cols: number) => Effect.sync(() => void exec.events.push(`resize ${rows}x${cols}`)) }
            : {})
        }
        return session
      })
  } as unknown as ContainerEngine.Service
  const box = { id: "box00000000000001", session: "s1", supervisorUid: 0, gone: false } as unknown as Box
  const boxes = {
    acquire: () => Effect.succeed(box),
    release: () => Effect.sync(() => void released++)
  }
  return { created, spawn: makeBoxTerminals({ engine, boxes }), released: () => released }
})

const received: Array<string> = []
const options: PtySpawner.Options = {
  file: "/bin/bash",
  args: ["--noprofile", "--norc", "-i"],
  cwd: "/work",
  env: { DSH_SESSION_ID: "s1" },
  rows: 24,
  cols: 80,
  onData: (chunk) => {
    received.push(chunk)
    return true
  },
  onExit: () => {}
}

/** Starts a terminal whose shell says pid 7: the TTY exec and the probe's, and the PTY. */
const started = (engine: Effect.Effect.Success<typeof scripted>, scope: Scope.Scope) =>
  Effect.gen(function*() {
    const fiber = yield* Effect.fork(Scope.extend(engine.spawn(options), scope))
    const tty = yield* Queue.take(engine.created)
    yield* Queue.offer(tty.output, frame("effect-bash-terminal-start 7\r\n"))
    expect(yield* Queue.take(tty.inputs)).toBe("\n")
    yield* Queue.offer(tty.output, frame("\r\neffect-bash-terminal-start go\r\nfirst output"))
    const probe = yield* Queue.take(engine.created)
    const pty = yield* Fiber.join(fiber)
    return { tty, probe, pty }
  })

/** Closes the terminal's scope while the probe is silent: its kill and exit questions end at their bounds. */
const release = (scope: Scope.CloseableScope) =>
  Effect.gen(function*() {
    const closing = yield* Effect.fork(Scope.close(scope, Exit.void))
    yield* TestClock.adjust(20_000)
    yield* Fiber.join(closing)
  })

describe("a terminal's PTY in a box", () => {
  it.effect("the shell is started by argv in its directory, sized before it runs, and its output follows the launcher's lines", () =>
    Effect.gen(function*() {
      received.length = 0
      const engine = yield* scripted
      const scope = yield* Scope.make()
      const { probe, pty, tty } = yield* started(engine, scope)
      expect(tty.tty).toBe(true)
      expect(tty.argv.slice(0, 2)).toEqual(["/bin/sh", "-c"])
      expect(tty.argv.slice(3)).toEqual(["effect-bash-terminal", "/work", "/bin/bash", "--noprofile", "--norc", "-i"])
      // The size is set before the launcher is let go: a shell started before would redraw its prompt.
      expect(tty.events).toEqual(["resize 24x80", "write \"\\n\""])
      expect(pty.pid).toBe(7)
      expect(probe.argv.at(-2)).toBe("effect-bash-terminal-probe")
      expect(probe.argv.at(-1)).toBe("7")
      yield* Effect.yieldNow()
      expect(received.join("")).toBe("first output")
      yield* release(scope)
    }))

  it.effect("the probe's answers are the foreground group, its stdin wait, the signals and the counts", () =>
    Effect.gen(function*() {
      const engine = yield* scripted
      const scope = yield* Scope.make()
      const { probe, pty } = yield* started(engine, scope)
      const answer = (reply: (id: string) => string) =>
        Effect.flatMap(Queue.take(probe.inputs), (request) => {
          const id = request.split(" ")[0]!
          return Effect.as(Queue.offer(probe.output, frame(`${reply(id)}\n`)), request.trim())
        })
      const foreground = yield* Effect.fork(pty.foreground)
      expect(yield* answer((id) => `${id} 42 1 9`)).toBe("1 fg")
      expect(yield* Fiber.join(foreground)).toEqual({ pgid: 42, readingInput: true, wakeups: 9 })
      const signalled = yield* Effect.fork(pty.signalGroup(42, "SIGINT"))
      expect(yield* answer((id) => `${id} ok`)).toBe("2 group SIGINT 42")
      expect(yield* Fiber.join(signalled)).toBe(true)
      const all = yield* Effect.fork(pty.signalAll("SIGTERM"))
      expect(yield* answer((id) => `${id} 3`)).toBe("3 all SIGTERM")
      expect(yield* Fiber.join(all)).toBe(3)
      const none = yield* Effect.fork(pty.foreground)
      yield* answer((id) => `${id} none`)
      expect(yield* Fiber.join(none)).toBeUndefined()
      yield* release(scope)
    }))

  it.effect("a receiver that holds all it will stops the reads of the TTY until it resumes them", () =>
    Effect.gen(function*() {
      const engine = yield* scripted
      const scope = yield* Scope.make()
      const taken = yield* Queue.unbounded<string>()
      // The first chunk fills the receiver; it takes every later one.
      let refused = false
      const onData = (chunk: string) => {
        Queue.unsafeOffer(taken, chunk)
        return refused ? true : !(refused = true)
      }
      const fiber = yield* Effect.fork(Scope.extend(engine.spawn({ ...options, onData }), scope))
      const tty = yield* Queue.take(engine.created)
      yield* Queue.offer(tty.output, frame("effect-bash-terminal-start 7\r\n"))
      yield* Queue.take(tty.inputs)
      yield* Queue.offer(tty.output, frame("effect-bash-terminal-start go\r\nfull"))
      yield* Queue.take(engine.created)
      const pty = yield* Fiber.join(fiber)
      expect(yield* Queue.take(taken)).toBe("full")
      yield* Queue.offer(tty.output, frame("more"))
      yield* Effect.repeatN(Effect.yieldNow(), 20)
      // Not read: "more" stays with the engine.
      expect(yield* Queue.size(tty.output)).toBe(1)
      yield* pty.resume
      expect(yield* Queue.take(taken)).toBe("more")
      yield* release(scope)
    }))

  it.effect("a directory missing in the box refuses the start with the host's text", () =>
    Effect.gen(function*() {
      const engine = yield* scripted
      const fiber = yield* Effect.fork(Effect.scoped(engine.spawn(options)))
      const tty = yield* Queue.take(engine.created)
      yield* Queue.offer(tty.output, frame("effect-bash-terminal-start nowd\r\n"))
      yield* Queue.offer(tty.output, undefined)
      const failure = yield* Effect.flip(Fiber.join(fiber))
      expect(failure.message).toBe("working directory /work does not exist or is not a directory")
      expect([tty.closed, engine.released()]).toEqual([true, 1])
    }))

  it.effect("a shell that never says its pid fails the start at the bound; its exec is closed and its box released", () =>
    Effect.gen(function*() {
      const engine = yield* scripted
      const fiber = yield* Effect.fork(Effect.scoped(engine.spawn(options)))
      const tty = yield* Queue.take(engine.created)
      yield* TestClock.adjust(30_000)
      const failure = yield* Effect.flip(Fiber.join(fiber))
      expect(failure.message).toBe("the terminal's shell did not start within 30000 ms in container box000000000")
      expect(tty.closed).toBe(true)
      expect(engine.released()).toBe(1)
    }))

  it.effect("a probe that never answers: each question ends at its bound, and the terminal's release ends too", () =>
    Effect.gen(function*() {
      const engine = yield* scripted
      const scope = yield* Scope.make()
      const { probe, pty, tty } = yield* started(engine, scope)
      const foreground = yield* Effect.fork(pty.foreground)
      yield* TestClock.adjust(10_000)
      expect(yield* Fiber.join(foreground)).toBeUndefined()
      // Unknown is not gone: close goes on to its KILL.
      const alive = yield* Effect.fork(pty.alive)
      yield* TestClock.adjust(10_000)
      expect(yield* Fiber.join(alive)).toBe(1)
      // The release asks the probe to kill what is left, then to exit: both bounded.
      const closing = yield* Effect.fork(Scope.close(scope, Exit.void))
      yield* TestClock.adjust(10_000)
      yield* TestClock.adjust(10_000)
      yield* Fiber.join(closing)
      expect(probe.events.slice(-2)).toEqual(["write \"3 all SIGKILL\\n\"", "write \"0 exit\\n\""])
      expect([probe.closed, tty.closed, engine.released()]).toEqual([true, true, 1])
      // Released, it counts none left at once: the layer closes a terminal after the terminal's scope,
      // and its close must not wait out the grace for processes the release killed.
      expect(yield* pty.alive).toBe(0)
      expect(yield* pty.signalAll("SIGKILL")).toBe(0)
    }))

  it.effect("a probe that ended (killed in the box) is started again, and the question goes to the new one", () =>
    Effect.gen(function*() {
      const engine = yield* scripted
      const scope = yield* Scope.make()
      const { probe, pty } = yield* started(engine, scope)
      yield* Queue.offer(probe.output, undefined)
      const foreground = yield* Effect.fork(pty.foreground)
      const again = yield* Queue.take(engine.created)
      expect(again.argv.slice(-2)).toEqual(["effect-bash-terminal-probe", "7"])
      // The first probe's exec was closed (it was told to exit; it had already ended).
      expect(probe.closed).toBe(true)
      const request = yield* Queue.take(again.inputs)
      expect(request).toBe("1 fg\n")
      yield* Queue.offer(again.output, frame("1 7 1 3\n"))
      expect(yield* Fiber.join(foreground)).toEqual({ pgid: 7, readingInput: true, wakeups: 3 })
      yield* release(scope)
      expect(again.closed).toBe(true)
    }))

  it.scoped("the terminals build over the container executor and open their shells in the box, not on the host's PTY", () =>
    Effect.gen(function*() {
      const host = FakePtySpawner.make()
      const executor = DockerBashExecutor.layerWithEngine({ image: "fake", cwd: dirs.fresh("work") }).pipe(
        Layer.provide(FakeContainerEngine.layer(() => ({ onTerm: "obey" })))
      )
      const context = yield* Layer.build(TerminalsLive.layer().pipe(Layer.provide(Layer.merge(host.layer, executor))))
      const refused = yield* Effect.flip(Context.get(context, Terminals).open("s1", { type: "shell" }))
      // The fake engine plays no TTY: its refusal is the open's, and no PTY started on the host.
      expect(refused.message).toBe(
        "the terminal's shell could not be started in container fake00000000: the fake engine runs no exec with a TTY (a terminal's shell)"
      )
      expect(host.ptys).toEqual([])
    }))
})
