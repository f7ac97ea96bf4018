import { describe, expect, it } from "@effect/vitest"
import { Chunk, ConfigError, Context, Data, Deferred, Effect, Exit, Fiber, Layer, Option, Ref, Scope, Stream, TestClock } from "effect"
import * as TasksLive from "../../src/layers/TasksLive.js"
import { Tasks } from "../../src/services/Tasks.js"

/** A controllable stand-in for a producer's work: no processes, just Refs and a Deferred. */
interface FakeWork {
  readonly work: Tasks.Work
  readonly cancels: Effect.Effect<number>
  readonly emit: (text: string) => Effect.Effect<void>
  readonly finish: (outcome: Tasks.Outcome) => Effect.Effect<void>
}

const killedOutcome: Tasks.Outcome = { status: "killed", detail: "signal: SIGTERM" }
const exitZero: Tasks.Outcome = { status: "completed", detail: "exit code: 0" }

const makeFakeWork = (options: { readonly settleOnCancel: boolean }) =>
  Effect.gen(function*() {
    const output = yield* Ref.make("")
    const cancels = yield* Ref.make(0)
    const done = yield* Deferred.make<Tasks.Outcome>()
    const finish = (outcome: Tasks.Outcome) => Deferred.succeed(done, outcome).pipe(Effect.asVoid)
    const work: Tasks.Work = {
      read: Ref.getAndSet(output, ""),
      cancel: Ref.update(cancels, (n) => n + 1).pipe(
        Effect.zipRight(options.settleOnCancel ? finish(killedOutcome) : Effect.void)
      ),
      done: Deferred.await(done)
    }
    return {
      work,
      cancels: Ref.get(cancels),
      emit: (text: string) => Ref.update(output, (buffer) => buffer + text),
      finish
    } satisfies FakeWork
  })

const bash = (label: string, owner?: string): Tasks.Meta => owner === undefined ? { kind: "bash", label } : { kind: "bash", label, owner }

/** Starts a task backed by a fresh fake whose cancel does not settle it (the test finishes it). */
const startFake = (meta: Tasks.Meta, options = { settleOnCancel: false }) =>
  Effect.gen(function*() {
    const tasks = yield* Tasks
    const fake = yield* makeFakeWork(options)
    const task = yield* tasks.start(meta, () => Effect.succeed(fake.work))
    return { ...fake, id: task.id, task }
  })

/** Finishes the work and waits (without moving the clock) until the runtime has recorded it. */
const finishAndSettle = (started: { readonly id: string; readonly finish: FakeWork["finish"] }, outcome: Tasks.Outcome, owner?: string) =>
  Effect.gen(function*() {
    const tasks = yield* Tasks
    yield* started.finish(outcome)
    return yield* tasks.wait(started.id, 60_000, owner)
  })

const withSurface = <A, E, R>(body: Effect.Effect<A, E, R>) =>
  Effect.gen(function*() {
    const tasks = yield* Tasks
    yield* tasks.attachSurface
    return yield* body
  })

const nextNotice = Effect.flatMap(Tasks, (tasks) =>
  tasks.notifications.pipe(Stream.take(1), Stream.runCollect, Effect.map(Chunk.unsafeHead)))

class LaunchFailed extends Data.TaggedError("LaunchFailed")<{ readonly reason: string }> {}

describe("Tasks.start", () => {
  it.scoped("fails before launching when no control surface is attached", () =>
    Effect.gen(function*() {
      const tasks = yield* Tasks
      const launches = yield* Ref.make(0)
      const error = yield* tasks.start(bash("sleep 1"), () =>
        Ref.update(launches, (n) => n + 1).pipe(Effect.zipRight(Effect.die("launch must not run")))).pipe(Effect.flip)
      expect(error._tag).toBe("TasksUnavailableError")
      expect(error.message).toBe(
        "background tasks unavailable: no control surface is attached (compose the task tools: AgentToolsLive with a Tasks layer)"
      )
      expect(yield* Ref.get(launches)).toBe(0)
    }).pipe(Effect.provide(TasksLive.layer())))

  it.scoped("works while at least one surface is attached, and stops working once all detach", () =>
    Effect.gen(function*() {
      const tasks = yield* Tasks
      const first = yield* Scope.make()
      const second = yield* Scope.make()
      yield* Scope.extend(tasks.attachSurface, first)
      yield* Scope.extend(tasks.attachSurface, second)
      yield* Scope.close(first, Exit.void)
      const started = yield* startFake(bash("echo one"))
      expect(started.id).toBe("bash-1")
      yield* Scope.close(second, Exit.void)
      const error = yield* startFake(bash("echo two")).pipe(Effect.flip)
      expect(error.message).toMatch(/^background tasks unavailable: no control surface is attached/)
      yield* finishAndSettle(started, exitZero)
    }).pipe(Effect.provide(TasksLive.layer())))

  it.scoped("allocates <kind>-<n> ids per kind from 1 and hands the id to launch", () =>
    withSurface(Effect.gen(function*() {
      const tasks = yield* Tasks
      const seen: Array<string> = []
      const launch = (id: string) =>
        Effect.sync(() => seen.push(id)).pipe(Effect.zipRight(makeFakeWork({ settleOnCancel: true })), Effect.map((f) => f.work))
      const a = yield* tasks.start(bash("a"), launch)
      const b = yield* tasks.start(bash("b"), launch)
      const c = yield* tasks.start({ kind: "job", label: "c" }, launch)
      expect([a.id, b.id, c.id]).toEqual(["bash-1", "bash-2", "job-1"])
      expect(seen).toEqual(["bash-1", "bash-2", "job-1"])
      expect(c).toEqual({ id: "job-1", kind: "job", label: "c", owner: undefined, status: "running", detail: undefined })
    })).pipe(Effect.provide(TasksLive.layer())))

  it.scoped("propagates a launch failure, records nothing, and never reuses the consumed id", () =>
    withSurface(Effect.gen(function*() {
      const tasks = yield* Tasks
      const error = yield* tasks.start(bash("bad"), () => Effect.fail(new LaunchFailed({ reason: "ENOENT" }))).pipe(Effect.flip)
      expect(error).toEqual(new LaunchFailed({ reason: "ENOENT" }))
      expect(yield* tasks.list(undefined)).toEqual([])
      const next = yield* startFake(bash("good"))
      expect(next.id).toBe("bash-2")
      yield* finishAndSettle(next, exitZero)
    })).pipe(Effect.provide(TasksLive.layer())))
})

describe("Tasks owner isolation", () => {
  it.scoped("hides owned tasks from other sessions and from callers without a session", () =>
    withSurface(Effect.gen(function*() {
      const tasks = yield* Tasks
      const owned = yield* startFake(bash("mine", "s1"))
      const shared = yield* startFake(bash("shared"))
      const foreign = "task bash-1 belongs to another session"
      expect((yield* tasks.get(owned.id, "s2").pipe(Effect.flip)).message).toBe(foreign)
      expect((yield* tasks.get(owned.id, undefined).pipe(Effect.flip)).message).toBe(foreign)
      expect((yield* tasks.read(owned.id, "s2").pipe(Effect.flip)).message).toBe(foreign)
      expect((yield* tasks.wait(owned.id, 10, "s2").pipe(Effect.flip)).message).toBe(foreign)
      expect((yield* tasks.kill(owned.id, "s2").pipe(Effect.flip)).message).toBe(foreign)
      expect(yield* owned.cancels).toBe(0)
      expect((yield* tasks.get("bash-99", "s1").pipe(Effect.flip)).message).toBe("unknown task bash-99")
      expect((yield* tasks.get(owned.id, "s1")).label).toBe("mine")
      expect((yield* tasks.list("s1")).map((t) => t.id)).toEqual([owned.id, shared.id])
      expect((yield* tasks.list("s2")).map((t) => t.id)).toEqual([shared.id])
      expect((yield* tasks.list(undefined)).map((t) => t.id)).toEqual([shared.id])
      yield* finishAndSettle(owned, exitZero, "s1")
      yield* finishAndSettle(shared, exitZero)
    })).pipe(Effect.provide(TasksLive.layer())))
})

describe("Tasks.kill", () => {
  it.scoped("requests once, reports stopping, then the outcome once the work settles", () =>
    withSurface(Effect.gen(function*() {
      const tasks = yield* Tasks
      const task = yield* startFake(bash("sleep 100", "s1"))
      expect(yield* tasks.kill(task.id, "s1")).toBe("requested")
      expect((yield* tasks.get(task.id, "s1")).status).toBe("stopping")
      expect(yield* tasks.kill(task.id, "s1")).toBe("requested")
      expect(yield* task.cancels).toBe(1)
      const settled = yield* finishAndSettle(task, killedOutcome, "s1")
      expect(settled).toMatchObject({ status: "killed", detail: "signal: SIGTERM" })
      expect(yield* tasks.kill(task.id, "s1")).toBe("already-finished")
      expect(yield* task.cancels).toBe(1)
    })).pipe(Effect.provide(TasksLive.layer())))

  it.scoped("an interrupted kill still delivers the cancel it decided on", () =>
    withSurface(Effect.gen(function*() {
      const tasks = yield* Tasks
      const gate = yield* Deferred.make<void>()
      const asked = yield* Deferred.make<void>()
      const delivered = yield* Ref.make(0)
      const done = yield* Deferred.make<Tasks.Outcome>()
      const work: Tasks.Work = {
        read: Effect.succeed(""),
        // A cancel that takes a moment to deliver.
        cancel: Deferred.succeed(asked, undefined).pipe(
          Effect.zipRight(Deferred.await(gate)),
          Effect.zipRight(Ref.update(delivered, (n) => n + 1))
        ),
        done: Deferred.await(done)
      }
      const task = yield* tasks.start(bash("sleep 100"), () => Effect.succeed(work))
      const killing = yield* Effect.fork(tasks.kill(task.id, undefined))
      yield* Deferred.await(asked)
      const interrupting = yield* Effect.fork(Fiber.interrupt(killing))
      yield* Deferred.succeed(gate, undefined)
      yield* Fiber.join(interrupting)
      const status = (yield* tasks.get(task.id, undefined)).status
      yield* Deferred.succeed(done, killedOutcome)
      expect(yield* Ref.get(delivered)).toBe(1)
      expect(status).toBe("stopping")
    })).pipe(Effect.provide(TasksLive.layer())))

  it.scoped("answers already-finished for a completed task without cancelling it", () =>
    withSurface(Effect.gen(function*() {
      const tasks = yield* Tasks
      const task = yield* startFake(bash("true"))
      yield* finishAndSettle(task, exitZero)
      expect(yield* tasks.kill(task.id, undefined)).toBe("already-finished")
      expect(yield* task.cancels).toBe(0)
    })).pipe(Effect.provide(TasksLive.layer())))
})

describe("Tasks.read", () => {
  it.scoped("consumes output and returns the snapshot taken after the read", () =>
    withSurface(Effect.gen(function*() {
      const tasks = yield* Tasks
      const task = yield* startFake(bash("tail -f log"))
      yield* task.emit("hello\n")
      expect(yield* tasks.read(task.id, undefined)).toEqual({ output: "hello\n", task: task.task })
      expect((yield* tasks.read(task.id, undefined)).output).toBe("")
      yield* task.emit("tail")
      yield* finishAndSettle(task, exitZero)
      const last = yield* tasks.read(task.id, undefined)
      expect(last.output).toBe("tail")
      expect(last.task).toMatchObject({ status: "completed", detail: "exit code: 0" })
    })).pipe(Effect.provide(TasksLive.layer())))

  it.scoped("drains output that arrived while the task settled during the read", () =>
    withSurface(Effect.gen(function*() {
      const tasks = yield* Tasks
      const done = yield* Deferred.make<Tasks.Outcome>()
      const buffer = yield* Ref.make("early")
      const work: Tasks.Work = {
        // The first read races the end of the work: it settles, and "late" lands after the read took its bytes.
        read: Effect.gen(function*() {
          const taken = yield* Ref.getAndSet(buffer, "")
          if (yield* Deferred.succeed(done, exitZero)) {
            yield* tasks.wait("bash-1", 60_000, undefined).pipe(Effect.orDie)
            yield* Ref.set(buffer, "late")
          }
          return taken
        }),
        cancel: Effect.void,
        done: Deferred.await(done)
      }
      yield* tasks.start(bash("racy"), () => Effect.succeed(work))
      const result = yield* tasks.read("bash-1", undefined)
      expect(result.output).toBe("earlylate")
      expect(result.task.status).toBe("completed")
    })).pipe(Effect.provide(TasksLive.layer())))
})

describe("Tasks.wait", () => {
  it.scoped("returns the running snapshot at the timeout and leaves the task alive", () =>
    withSurface(Effect.gen(function*() {
      const tasks = yield* Tasks
      const task = yield* startFake(bash("sleep 100"))
      const waiting = yield* Effect.fork(tasks.wait(task.id, 1_000, undefined))
      yield* TestClock.adjust("999 millis")
      expect(Option.isNone(yield* Fiber.poll(waiting))).toBe(true)
      yield* TestClock.adjust("1 millis")
      expect((yield* Fiber.join(waiting)).status).toBe("running")
      expect((yield* tasks.get(task.id, undefined)).status).toBe("running")
      expect(yield* task.cancels).toBe(0)
      yield* finishAndSettle(task, exitZero)
    })).pipe(Effect.provide(TasksLive.layer())))

  it.scoped("returns the terminal snapshot as soon as the work settles", () =>
    withSurface(Effect.gen(function*() {
      const tasks = yield* Tasks
      const task = yield* startFake(bash("make"))
      const waiting = yield* Effect.fork(tasks.wait(task.id, 1_000, undefined))
      yield* task.finish({ status: "completed", detail: "exit code: 2" })
      expect(yield* Fiber.join(waiting)).toMatchObject({ status: "completed", detail: "exit code: 2" })
    })).pipe(Effect.provide(TasksLive.layer())))

  it.scoped("rejects a timeout that is not a positive finite number", () =>
    withSurface(Effect.gen(function*() {
      const tasks = yield* Tasks
      const task = yield* startFake(bash("sleep 1"))
      const huge = "9".repeat(10_000)
      for (const [value, shown] of [[0, "0"], [-5, "-5"], [Number.NaN, "NaN"], [Infinity, "Infinity"], ["100", "100"], [huge, `${huge.slice(0, 200)}…`]] as const) {
        const error = yield* tasks.wait(task.id, value as number, undefined).pipe(Effect.flip)
        expect(error._tag).toBe("InvalidWaitTimeoutError")
        expect(error.message).toBe(`invalid wait timeout: expected a positive number of milliseconds, got ${shown}`)
      }
      yield* finishAndSettle(task, exitZero)
    })).pipe(Effect.provide(TasksLive.layer())))
})

describe("Tasks.notifications", () => {
  it.scoped("buffers a notice produced with no subscriber and delivers each finished task once", () =>
    withSurface(Effect.gen(function*() {
      const first = yield* startFake(bash("build", "s1"))
      const second = yield* startFake(bash("test", "s1"))
      yield* finishAndSettle(first, exitZero, "s1")
      expect(yield* nextNotice).toEqual({
        owner: "s1",
        task: { id: "bash-1", kind: "bash", label: "build", owner: "s1", status: "completed", detail: "exit code: 0" }
      })
      const following = yield* Effect.fork(nextNotice)
      yield* finishAndSettle(second, { status: "failed", detail: "exit code: 1" }, "s1")
      expect((yield* Fiber.join(following)).task.id).toBe("bash-2")
    })).pipe(Effect.provide(TasksLive.layer())))

  it.scoped("sends no notice for a task already reported by markReported or by a terminal read", () =>
    withSurface(Effect.gen(function*() {
      const tasks = yield* Tasks
      const marked = yield* startFake(bash("a"))
      const read = yield* startFake(bash("b"))
      const unreported = yield* startFake(bash("c"))
      yield* finishAndSettle(marked, exitZero)
      yield* tasks.markReported(marked.id)
      yield* finishAndSettle(read, exitZero)
      yield* tasks.read(read.id, undefined)
      yield* finishAndSettle(unreported, exitZero)
      expect((yield* nextNotice).task.id).toBe(unreported.id)
    })).pipe(Effect.provide(TasksLive.layer())))

  it.scoped("markReported on a running task does not suppress its later notice", () =>
    withSurface(Effect.gen(function*() {
      const tasks = yield* Tasks
      const task = yield* startFake(bash("a"))
      yield* tasks.markReported(task.id)
      yield* finishAndSettle(task, exitZero)
      expect((yield* nextNotice).task.id).toBe(task.id)
    })).pipe(Effect.provide(TasksLive.layer())))
})

describe("Tasks retention", () => {
  it.scoped("keeps at most maxRetainedFinished finished tasks, evicting the earliest finished, never running ones", () =>
    withSurface(Effect.gen(function*() {
      const tasks = yield* Tasks
      const running = yield* startFake(bash("server"))
      const a = yield* startFake(bash("a"))
      const b = yield* startFake(bash("b"))
      const c = yield* startFake(bash("c"))
      yield* finishAndSettle(b, exitZero)
      yield* finishAndSettle(c, exitZero)
      yield* finishAndSettle(a, exitZero)
      expect((yield* tasks.list(undefined)).map((t) => t.id)).toEqual([running.id, a.id, c.id])
      expect((yield* tasks.get(b.id, undefined).pipe(Effect.flip)).message).toBe(`unknown task ${b.id}`)
      // The evicted task's notice is dropped with it (it could no longer be read); the others arrive.
      const delivered = yield* Tasks.pipe(
        Effect.flatMap((t) => t.notifications.pipe(Stream.take(2), Stream.runCollect)),
        Effect.map(Chunk.toReadonlyArray)
      )
      expect(delivered.map((n) => n.task.id)).toEqual([c.id, a.id])
      yield* finishAndSettle(running, exitZero)
    })).pipe(Effect.provide(TasksLive.layer({ maxRetainedFinished: 2 }))))

  it.effect("rejects a retention limit that is not a positive integer", () =>
    Effect.gen(function*() {
      for (const value of [0, -1, 1.5, Number.NaN]) {
        const error = yield* Layer.build(TasksLive.layer({ maxRetainedFinished: value })).pipe(Effect.scoped, Effect.flip)
        expect(ConfigError.isInvalidData(error) && error.message).toBe("tasks: maxRetainedFinished must be a positive integer")
      }
    }))
})

describe("Tasks supervision and disposal", () => {
  it.scoped("records failed with a detail when work.done dies", () =>
    withSurface(Effect.gen(function*() {
      const tasks = yield* Tasks
      const work: Tasks.Work = { read: Effect.succeed(""), cancel: Effect.void, done: Effect.die(new Error("boom")) }
      const task = yield* tasks.start(bash("doomed"), () => Effect.succeed(work))
      expect(yield* tasks.wait(task.id, 60_000, undefined)).toMatchObject({
        status: "failed",
        detail: "task work ended abnormally: boom"
      })
    })).pipe(Effect.provide(TasksLive.layer())))

  /** Builds the layer in a scope the test closes itself. */
  const buildTasks = (config?: Parameters<typeof TasksLive.layer>[0]) =>
    Effect.gen(function*() {
      const scope = yield* Scope.make()
      const context = yield* Layer.buildWithScope(TasksLive.layer(config), scope)
      const tasks = Context.get(context, Tasks)
      yield* Scope.extend(tasks.attachSurface, scope)
      return { scope, tasks, provide: Effect.provideService(Tasks, tasks) }
    })

  it.effect("cancels every unfinished task and awaits its settlement when the scope closes", () =>
    Effect.gen(function*() {
      const { provide, scope, tasks } = yield* buildTasks()
      const first = yield* startFake(bash("server a"), { settleOnCancel: true }).pipe(provide)
      const second = yield* startFake(bash("server b"), { settleOnCancel: true }).pipe(provide)
      const finished = yield* startFake(bash("true")).pipe(provide)
      yield* finishAndSettle(finished, exitZero).pipe(provide)
      yield* Scope.close(scope, Exit.void)
      expect([yield* first.cancels, yield* second.cancels, yield* finished.cancels]).toEqual([1, 1, 0])
      for (const task of [first, second]) {
        expect(yield* tasks.get(task.id, undefined)).toMatchObject({ status: "killed", detail: "signal: SIGTERM" })
      }
      const launches = yield* Ref.make(0)
      const error = yield* tasks.start(bash("late"), () => Ref.update(launches, (n) => n + 1).pipe(Effect.zipRight(Effect.never)))
        .pipe(Effect.flip)
      expect(error.message).toBe("background tasks unavailable: the task runtime has shut down")
      expect(yield* Ref.get(launches)).toBe(0)
    }))

  it.effect("bounds the wait for work that never settles by disposeTimeoutMs", () =>
    Effect.gen(function*() {
      const { provide, scope } = yield* buildTasks({ disposeTimeoutMs: 500 })
      const stuck = yield* startFake(bash("trap '' TERM; sleep 1000")).pipe(provide)
      const closing = yield* Effect.fork(Scope.close(scope, Exit.void))
      yield* TestClock.adjust("499 millis")
      expect(Option.isNone(yield* Fiber.poll(closing))).toBe(true)
      yield* TestClock.adjust("1 millis")
      yield* Fiber.join(closing)
      expect(yield* stuck.cancels).toBe(1)
    }))

  it.effect("does not cancel a stopping task again, and ends the notification stream", () =>
    Effect.gen(function*() {
      const { provide, scope, tasks } = yield* buildTasks()
      const stopping = yield* startFake(bash("slow to stop")).pipe(provide)
      yield* tasks.kill(stopping.id, undefined)
      const subscriber = yield* Effect.fork(Stream.runCollect(tasks.notifications))
      const closing = yield* Effect.fork(Scope.close(scope, Exit.void))
      yield* finishAndSettle(stopping, killedOutcome).pipe(provide)
      yield* Fiber.join(closing)
      expect(yield* stopping.cancels).toBe(1)
      expect(Chunk.isChunk(yield* Fiber.join(subscriber))).toBe(true)
    }))
})
