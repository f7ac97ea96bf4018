import { describe, expect, it } from "@effect/vitest"
import { Chunk, Effect, Fiber, Layer, Option, Stream, TestClock } from "effect"
import * as FakeConfiningExecutor from "../../src/testing/FakeConfiningExecutor.js"
import * as ScriptedBashExecutor from "../../src/testing/ScriptedBashExecutor.js"
import * as TasksLive from "../../src/layers/TasksLive.js"
import { Tasks } from "../../src/services/Tasks.js"
import { AgentTools } from "../../src/services/AgentTools.js"
import { CompletionNotices } from "../../src/services/CompletionNotices.js"
import { escalationHint } from "../../src/tool/sandboxNotices.js"
import { callTool, compose, composeWith, composeWithApproval, dshHome, textOf } from "../support/tools.js"

const s1 = { session: { id: "s1" } }
const s2 = { session: { id: "s2" } }
const background = (command: string) => ({ command, description: "Run it in the background", run_in_background: true })

const layer = () => compose({ executor: ScriptedBashExecutor.layer() })
const executor = ScriptedBashExecutor.ScriptedBashExecutor
const processes = Effect.flatMap(executor, (scripted) => scripted.processes)
const nth = (index: number) => Effect.map(processes, (all) => all[index]!)

/** Until the runtime has recorded the task's end (the wait never times out on the TestClock). */
const settled = (id: string, caller = "s1") => Effect.flatMap(Tasks, (tasks) => tasks.wait(id, 60_000, caller))

/** Starts a background command for s1 and returns its scripted process. */
const startFor = (command: string, caller = s1) =>
  Effect.gen(function*() {
    const before = (yield* processes).length
    yield* textOf("bash", background(command), caller)
    return yield* nth(before)
  })

describe("background start", () => {
  it.effect("answers `started background task <id>` with the value { kind: 'background', taskId }", () =>
    Effect.gen(function*() {
      const first = yield* callTool("bash", background("npm run dev"), s1)
      expect(first).toEqual({ isError: false, value: { kind: "background", taskId: "bash-1" }, text: "started background task bash-1" })
      expect(yield* textOf("bash", background("sleep 100"), s1)).toBe("started background task bash-2")
      const calls = yield* Effect.flatMap(executor, (scripted) => scripted.calls)
      expect(calls.map((call) => call.op)).toEqual(["start", "start"])
      expect(calls[0]!.spec.owner).toBe("s1")
      expect(calls[0]!.spec.signal).toBeUndefined()
      expect(calls[0]!.spec.dshEnv).toEqual({ DSH_HOME: dshHome, DSH_SESSION_ID: "s1", DSH_SHELL: "1" })
    }).pipe(Effect.provide(layer())))

  it.effect("no control surface attached: the runtime refuses before anything is spawned", () =>
    Effect.gen(function*() {
      expect(yield* textOf("bash", background("sleep 100"), s1)).toBe(
        "Error: background tasks unavailable: no control surface is attached (compose the task tools: AgentToolsLive with a Tasks layer)"
      )
      expect(yield* processes).toEqual([])
      expect(yield* Effect.flatMap(executor, (scripted) => scripted.calls)).toEqual([])
    }).pipe(Effect.provide(composeWith({
      executor: ScriptedBashExecutor.layer(),
      // A runtime whose surface never attaches, as when the task tools are not composed with it.
      services: Layer.effect(Tasks, Effect.map(Tasks, (tasks) => ({ ...tasks, attachSurface: Effect.void }))).pipe(
        Layer.provide(TasksLive.layer()),
        Layer.orDie
      )
    }))))
})

describe("task_output", () => {
  it.effect("consuming reads: (no new output), new output, then nothing again; each with the status line", () =>
    Effect.gen(function*() {
      const proc = yield* startFor("npm run dev")
      const read = textOf("task_output", { task_id: "bash-1", wait: false }, s1)
      expect(yield* read).toBe("(no new output)\n[status: running]")
      yield* proc.emit("ready\n", "warn\n")
      expect(yield* read).toBe("ready\n[stderr]\nwarn\n[status: running]")
      expect(yield* read).toBe("(no new output)\n[status: running]")
      yield* proc.emit("partial")
      expect(yield* read).toBe("partial\n[status: running]")
    }).pipe(Effect.provide(layer())))

  it.effect("a lossy read carries the notice with the spill paths", () =>
    Effect.gen(function*() {
      const proc = yield* startFor("yes")
      yield* proc.emit("y\ny\n")
      yield* proc.drop({ stdoutSpillPath: "/spill/out" })
      expect(yield* textOf("task_output", { task_id: "bash-1", wait: false }, s1)).toBe(
        "y\ny\n[some output was dropped from memory; full output: /spill/out]\n[status: running]"
      )
    }).pipe(Effect.provide(layer())))

  it.effect("outcome details: a non-zero exit is still completed; signal; killed before exit; killed but exited", () =>
    Effect.gen(function*() {
      const a = yield* startFor("exit 3")
      const b = yield* startFor("crash")
      const c = yield* startFor("never spawned")
      const d = yield* startFor("trap 'exit 0' TERM; sleep 100")
      yield* a.finish({ exitCode: 3 })
      yield* b.finish({ exitCode: null, signal: "SIGSEGV" })
      yield* c.finish({ exitCode: null, status: "killed" })
      yield* d.finish({ exitCode: 0, status: "killed" })
      expect(yield* textOf("task_output", { task_id: "bash-1" }, s1)).toBe("(no new output)\n[status: completed, exit code: 3]")
      expect(yield* textOf("task_output", { task_id: "bash-2" }, s1)).toBe("(no new output)\n[status: completed, signal: SIGSEGV]")
      expect(yield* textOf("task_output", { task_id: "bash-3" }, s1)).toBe("(no new output)\n[status: killed, killed before exit]")
      expect(yield* textOf("task_output", { task_id: "bash-4" }, s1)).toBe("(no new output)\n[status: killed, exit code: 0]")
    }).pipe(Effect.provide(layer())))

  it.effect("waits until the task finishes when that comes first", () =>
    Effect.gen(function*() {
      const proc = yield* startFor("make")
      const reading = yield* Effect.fork(textOf("task_output", { task_id: "bash-1", timeout_ms: 5_000 }, s1))
      yield* TestClock.adjust("1 second")
      expect(Option.isNone(yield* Fiber.poll(reading))).toBe(true)
      yield* proc.emit("built\n")
      yield* proc.finish({ exitCode: 0 })
      expect(yield* Fiber.join(reading)).toBe("built\n[status: completed, exit code: 0]")
    }).pipe(Effect.provide(layer())))

  it.effect("the wait ends at timeout_ms with the task still alive", () =>
    Effect.gen(function*() {
      const proc = yield* startFor("sleep 100")
      yield* proc.emit("tick\n")
      const reading = yield* Effect.fork(textOf("task_output", { task_id: "bash-1", timeout_ms: 1_000 }, s1))
      yield* TestClock.adjust("999 millis")
      expect(Option.isNone(yield* Fiber.poll(reading))).toBe(true)
      yield* TestClock.adjust("1 millis")
      expect(yield* Fiber.join(reading)).toBe("tick\n[status: running]")
      expect(yield* proc.killCalls).toBe(0)
      expect((yield* proc.process.state).status).toBe("running")
    }).pipe(Effect.provide(layer())))

  it.effect("the default wait is 30000 ms", () =>
    Effect.gen(function*() {
      yield* startFor("sleep 100")
      const reading = yield* Effect.fork(textOf("task_output", { task_id: "bash-1" }, s1))
      yield* TestClock.adjust("29999 millis")
      expect(Option.isNone(yield* Fiber.poll(reading))).toBe(true)
      yield* TestClock.adjust("1 millis")
      expect(yield* Fiber.join(reading)).toBe("(no new output)\n[status: running]")
    }).pipe(Effect.provide(layer())))

  it.effect("a longer wait is capped at 600000 ms", () =>
    Effect.gen(function*() {
      yield* startFor("sleep 10000")
      const reading = yield* Effect.fork(textOf("task_output", { task_id: "bash-1", timeout_ms: 10_000_000 }, s1))
      yield* TestClock.adjust("599999 millis")
      expect(Option.isNone(yield* Fiber.poll(reading))).toBe(true)
      yield* TestClock.adjust("1 millis")
      expect(yield* Fiber.join(reading)).toBe("(no new output)\n[status: running]")
    }).pipe(Effect.provide(layer())))

  it.effect("aborting the call ends the wait with `command aborted`; the task runs on and its output stays unread", () =>
    Effect.gen(function*() {
      const proc = yield* startFor("npm run dev")
      yield* proc.emit("ready\n")
      const controller = new AbortController()
      const reading = yield* Effect.fork(
        textOf("task_output", { task_id: "bash-1", timeout_ms: 60_000 }, { ...s1, signal: controller.signal })
      )
      yield* TestClock.adjust("1 second")
      expect(Option.isNone(yield* Fiber.poll(reading))).toBe(true)
      controller.abort()
      expect(yield* Fiber.join(reading)).toBe("Error: command aborted")
      expect(yield* proc.killCalls).toBe(0)
      expect(yield* textOf("task_output", { task_id: "bash-1", wait: false }, s1)).toBe("ready\n[status: running]")
    }).pipe(Effect.provide(layer())))

  it.effect("sandbox facts of a finished background command are shown once", () =>
    Effect.gen(function*() {
      yield* textOf("bash", background("echo x > /etc/forbidden"), { session: { id: "s1", cwd: "/ws" } })
      expect(yield* textOf("task_output", { task_id: "bash-1" }, s1)).toBe(
        "[stderr]\nbash: /etc/forbidden: Permission denied\n" +
          "[sandbox: file access denied under workspace-write mode]\n" + escalationHint + "\n" +
          "[status: completed, exit code: 1]"
      )
      expect(yield* textOf("task_output", { task_id: "bash-1" }, s1)).toBe("(no new output)\n[status: completed, exit code: 1]")
    }).pipe(Effect.provide(composeWithApproval({ executor: FakeConfiningExecutor.layer({ workspaceRoot: "/ws" }) }))))

  const invalid: ReadonlyArray<readonly [string, unknown, string]> = [
    ["empty task_id", { task_id: "" }, "invalid task_id: expected a non-empty string, got \"\""],
    ["numeric task_id", { task_id: 1 }, "invalid task_id: expected a non-empty string, got 1"],
    ["missing task_id", {}, "invalid task_id: expected a non-empty string, got undefined"],
    ["non-boolean wait", { task_id: "bash-1", wait: "no" }, "invalid wait: expected a boolean, got \"no\""],
    ["bad timeout", { task_id: "bash-1", timeout_ms: -1 }, "invalid wait timeout: expected a positive number of milliseconds, got -1"],
    ["unknown task", { task_id: "bash-9", wait: false }, "unknown task bash-9"]
  ]
  for (const [name, args, message] of invalid) {
    it.effect(name, () =>
      Effect.gen(function*() {
        yield* startFor("sleep 1")
        expect(yield* textOf("task_output", args, s1)).toBe(`Error: ${message}`)
      }).pipe(Effect.provide(layer())))
  }
})

describe("session isolation", () => {
  it.effect("another session (or no session) can neither read nor kill, nor see the task", () =>
    Effect.gen(function*() {
      const proc = yield* startFor("sleep 100")
      yield* proc.emit("secret\n")
      const foreign = "Error: task bash-1 belongs to another session"
      expect(yield* textOf("task_output", { task_id: "bash-1", wait: false }, s2)).toBe(foreign)
      expect(yield* textOf("task_kill", { task_id: "bash-1" }, s2)).toBe(foreign)
      expect(yield* textOf("task_output", { task_id: "bash-1", wait: false })).toBe(foreign)
      expect(yield* textOf("task_list", {}, s2)).toBe("(no background tasks)")
      expect(yield* proc.killCalls).toBe(0)
      expect(yield* textOf("task_output", { task_id: "bash-1", wait: false }, s1)).toBe("secret\n[status: running]")
    }).pipe(Effect.provide(layer())))
})

describe("task_list and task_kill", () => {
  it.effect("lists the caller's tasks, one `<id> [<kind>] <status> — <label>` line each", () =>
    Effect.gen(function*() {
      expect(yield* textOf("task_list", {}, s1)).toBe("(no background tasks)")
      yield* startFor("npm run dev")
      const done = yield* startFor("npm   test\n  --watch=false")
      yield* done.finish({ exitCode: 0 })
      yield* settled("bash-2")
      yield* startFor("sleep 5", s2)
      expect(yield* textOf("task_list", { ignored: true }, s1)).toBe(
        "bash-1 [bash] running — npm run dev\nbash-2 [bash] completed — npm test --watch=false"
      )
    }).pipe(Effect.provide(layer())))

  it.effect("kill: requested, then killed with its signal, then already finished", () =>
    Effect.gen(function*() {
      const proc = yield* startFor("sleep 100")
      expect(yield* textOf("task_kill", { task_id: "bash-1", reason: "no longer needed" }, s1)).toBe(
        "requested cancellation of task bash-1"
      )
      expect(yield* proc.killCalls).toBe(1)
      expect(yield* textOf("task_output", { task_id: "bash-1" }, s1)).toBe("(no new output)\n[status: killed, signal: SIGTERM]")
      expect(yield* textOf("task_kill", { task_id: "bash-1" }, s1)).toBe(
        "task bash-1 had already finished [status: killed, signal: SIGTERM]"
      )
      expect(yield* proc.killCalls).toBe(1)
    }).pipe(Effect.provide(layer())))

  it.effect("kill validation", () =>
    Effect.gen(function*() {
      expect(yield* textOf("task_kill", { task_id: "  " }, s1)).toBe(
        "Error: invalid task_id: expected a non-empty string, got \"  \""
      )
      expect(yield* textOf("task_kill", { task_id: "bash-1", reason: 3 }, s1)).toBe(
        "Error: invalid reason: expected a string, got 3"
      )
      expect(yield* textOf("task_kill", { task_id: "bash-4" }, s1)).toBe("Error: unknown task bash-4")
    }).pipe(Effect.provide(layer())))
})

/** The session's notices once `count` have arrived (the consumer fiber runs when this one yields). */
const noticesFor = (session: string, count: number) =>
  Effect.gen(function*() {
    const tools = yield* AgentTools
    const taken: Array<string> = []
    for (let turn = 0; turn < 1_000 && taken.length < count; turn++) {
      taken.push(...(yield* tools.takeNotices(session)))
      if (taken.length < count) yield* Effect.yieldNow()
    }
    return taken
  })

describe("completion notices", () => {
  it.effect("each finished task is announced to its owner once; a task whose final status was shown is not", () =>
    Effect.gen(function*() {
      const tools = yield* AgentTools
      const first = yield* startFor("make build")
      const second = yield* startFor("make test")
      const third = yield* startFor("make lint")
      const fourth = yield* startFor("make docs", s2)
      yield* second.finish({ exitCode: 2 })
      yield* settled("bash-2")
      // The owner reads bash-2's final status: no notice is due for it any more.
      expect(yield* textOf("task_output", { task_id: "bash-2", wait: false }, s1)).toBe(
        "(no new output)\n[status: completed, exit code: 2]"
      )
      yield* first.finish({ exitCode: 0 })
      yield* third.finish({ exitCode: 1 })
      expect(yield* noticesFor("s1", 2)).toEqual([
        "background task bash-1 (bash: make build) finished [status: completed, exit code: 0]. Read its output with task_output.",
        "background task bash-3 (bash: make lint) finished [status: completed, exit code: 1]. Read its output with task_output."
      ])
      expect(yield* tools.takeNotices("s1")).toEqual([])
      yield* fourth.finish({ exitCode: 0 })
      expect(yield* noticesFor("s2", 1)).toEqual([
        "background task bash-4 (bash: make docs) finished [status: completed, exit code: 0]. Read its output with task_output."
      ])
      expect(yield* tools.takeNotices("s1")).toEqual([])
    }).pipe(Effect.provide(layer())))

  it.effect("a notice already queued is dropped once a task_kill result shows the final status", () =>
    Effect.gen(function*() {
      const proc = yield* startFor("make build")
      yield* proc.finish({ exitCode: 0 })
      yield* settled("bash-1")
      expect(yield* textOf("task_kill", { task_id: "bash-1" }, s1)).toBe(
        "task bash-1 had already finished [status: completed, exit code: 0]"
      )
      const later = yield* startFor("make test")
      yield* later.finish({ exitCode: 0 })
      // Only the later task's notice arrives: bash-1's was either never sent or dropped.
      expect(yield* noticesFor("s1", 1)).toEqual([
        "background task bash-2 (bash: make test) finished [status: completed, exit code: 0]. Read its output with task_output."
      ])
    }).pipe(Effect.provide(layer())))
  it.effect("CompletionNotices names the owner as a notice arrives and hands out task and text once, sharing the queue", () =>
    Effect.gen(function*() {
      const notices = yield* CompletionNotices
      const tools = yield* AgentTools
      const proc = yield* startFor("make build")
      const arrived = yield* Effect.fork(Stream.runCollect(Stream.take(notices.arrivals, 1)))
      // Let the subscriber subscribe before the task ends.
      yield* Effect.yieldNow()
      yield* proc.finish({ exitCode: 0 })
      expect(Chunk.toReadonlyArray(yield* Fiber.join(arrived))).toEqual(["s1"])
      expect(yield* notices.take("s2")).toEqual([])
      expect(yield* notices.take("s1")).toEqual([{
        task: { id: "bash-1", kind: "bash", label: "make build", owner: "s1", status: "completed", detail: "exit code: 0" },
        text: "background task bash-1 (bash: make build) finished [status: completed, exit code: 0]. Read its output with task_output."
      }])
      expect(yield* notices.take("s1")).toEqual([])
      expect(yield* tools.takeNotices("s1")).toEqual([])
    }).pipe(Effect.provide(layer())))
})
