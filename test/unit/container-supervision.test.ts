/**
 * The container executor's supervision on a fake engine, driven by TestClock: a command's timeout,
 * its grace, the escalation to SIGKILL and, when nothing in the box can send it, to the box's
 * removal; a call interrupted before its command's pid line kills what the exec started. No engine,
 * no processes, no real time.
 */
import { afterAll, describe, expect, it } from "@effect/vitest"
import { Context, Effect, Exit, Fiber, Layer, Scope, TestClock } from "effect"
import * as DockerBashExecutor from "../../src/layers/DockerBashExecutor.js"
import { BashExecutor } from "../../src/services/BashExecutor.js"
import { ContainerEngine } from "../../src/services/ContainerEngine.js"
import * as FakeContainerEngine from "../../src/testing/FakeContainerEngine.js"
import { idleMs } from "../../src/layers/internal/container/ExecPool.js"
import * as fs from "node:fs"
import * as os from "node:os"
import { tempDirs } from "../support/tempDirs.js"

const timeoutMs = 1_000
const graceMs = 3_000
const dirs = tempDirs("effect-bash-fake-engine")
afterAll(dirs.removeAll)

/**
 * The executor on a fake engine, in a scope of its own, so a test can close it; `before` runs on the
 * engine before the executor starts.
 */
const build = (
  script: (command: string) => FakeContainerEngine.FakeContainerScript,
  before: (engine: ContainerEngine.Service) => Effect.Effect<void, ContainerEngine.Error> = () => Effect.void
) =>
  Effect.gen(function*() {
    const scope = yield* Scope.make()
    yield* Effect.addFinalizer(() => Scope.close(scope, Exit.void))
    const fake = yield* Layer.buildWithScope(FakeContainerEngine.layer(script), scope)
    yield* before(Context.get(fake, ContainerEngine))
    const layer = DockerBashExecutor.layerWithEngine({ image: "fake", cwd: dirs.fresh("work"), timeoutMs, graceMs })
    const context = yield* Layer.buildWithScope(Layer.provide(layer, Layer.succeedContext(fake)), scope)
    return {
      executor: Context.get(context, BashExecutor),
      engine: Context.get(fake, ContainerEngine),
      control: Context.get(fake, FakeContainerEngine.FakeContainerEngineControl),
      scope
    }
  })

describe("container supervision on a fake engine (TestClock)", () => {
  it.scoped("a command that ends is reported with its exit code and output", () =>
    Effect.gen(function*() {
      const { control, executor } = yield* build(() => ({ onTerm: "obey" }))
      const fiber = yield* Effect.fork(executor.run(yield* executor.resolve({ command: "echo hi; exit 3" })))
      const command = yield* control.next
      expect(command.command).toBe("echo hi; exit 3")
      yield* command.writeStdout("hi\n")
      yield* command.exit(3)
      const result = yield* Fiber.join(fiber)
      expect(result).toMatchObject({ exitCode: 3, signal: null, timedOut: false })
      expect(result.stdout.text).toBe("hi\n")
      expect(yield* command.signals).toEqual([])
    }))

  it.scoped("a timeout sends SIGTERM to the group, and the grace's end SIGKILL", () =>
    Effect.gen(function*() {
      const { control, executor } = yield* build(() => ({ onTerm: "ignore" }))
      const fiber = yield* Effect.fork(executor.run(yield* executor.resolve({ command: "stubborn" })))
      const command = yield* control.next
      yield* TestClock.adjust(timeoutMs)
      expect((yield* command.signals).map((sent) => sent.signal)).toEqual(["SIGTERM"])
      expect(yield* command.alive).toBe(true)
      yield* TestClock.adjust(graceMs)
      const result = yield* Fiber.join(fiber)
      expect(yield* command.signals).toEqual([
        { signal: "SIGTERM", atMillis: timeoutMs, delivered: true },
        { signal: "SIGKILL", atMillis: timeoutMs + graceMs, delivered: true }
      ])
      expect(result).toMatchObject({ timedOut: true, exitCode: null, signal: "SIGKILL" })
      expect(yield* command.alive).toBe(false)
    }))

  it.scoped("a command that obeys SIGTERM ends at the timeout, without a SIGKILL", () =>
    Effect.gen(function*() {
      const { control, executor } = yield* build(() => ({ onTerm: "obey" }))
      const fiber = yield* Effect.fork(executor.run(yield* executor.resolve({ command: "sleep 100" })))
      const command = yield* control.next
      yield* TestClock.adjust(timeoutMs)
      const result = yield* Fiber.join(fiber)
      expect(result).toMatchObject({ timedOut: true, signal: "SIGTERM" })
      expect((yield* command.signals).map((sent) => sent.signal)).toEqual(["SIGTERM"])
    }))

  it.scoped("a SIGKILL that nothing in the box can send removes the box, and the next call gets a new one", () =>
    Effect.gen(function*() {
      const { control, executor } = yield* build((command) => ({ onTerm: "ignore", unsignalable: command === "bomb" }))
      const fiber = yield* Effect.fork(executor.run(yield* executor.resolve({ command: "bomb" })))
      const command = yield* control.next
      yield* TestClock.adjust(timeoutMs + graceMs)
      const result = yield* Fiber.join(fiber)
      expect((yield* command.signals).map((sent) => [sent.signal, sent.delivered])).toEqual([
        ["SIGTERM", false],
        ["SIGKILL", false],
        ["SIGKILL", false]
      ])
      expect(result.timedOut).toBe(true)
      expect(result.stderr.text).toContain(`the container ${command.box.slice(0, 12)} was removed while the command ran`)
      expect((yield* control.boxes).map((box) => box.removed)).toEqual([true])

      const next = yield* Effect.fork(executor.run(yield* executor.resolve({ command: "true" })))
      const second = yield* control.next
      expect(second.box).not.toBe(command.box)
      yield* second.exit(0)
      expect((yield* Fiber.join(next)).exitCode).toBe(0)
    }))

  it.scoped("a call of its own exec (it has stdin) interrupted before its pid line runs nothing: its leader never gets the host's go", () =>
    Effect.gen(function*() {
      const { control, executor } = yield* build(() => ({ onTerm: "ignore", holdStart: true }))
      const fiber = yield* Effect.fork(executor.run(yield* executor.resolve({ command: "held", stdin: "input" })))
      const command = yield* control.next
      expect(yield* command.alive).toBe(true)
      yield* Fiber.interrupt(fiber)
      expect(yield* command.ran).toBe(false)
      expect(yield* command.alive).toBe(false)
      expect(yield* command.signals).toEqual([])
    }))

  it.scoped("calls with input or a variable bash cannot export take an exec of their own, ended on its streams; a command over 64 KiB is served", () =>
    Effect.gen(function*() {
      const { control, executor } = yield* build(() => ({ onTerm: "obey" }))
      const long = `: ${"x".repeat(70 * 1024)}`
      const calls: ReadonlyArray<[BashExecutor.Request, number]> = [
        [{ command: "true" }, 1],
        [{ command: long }, 1],
        [{ command: "cat", stdin: "input" }, 2],
        [{ command: "env", env: { "odd-name": "1" } }, 3]
      ]
      for (const [request, execs] of calls) {
        const fiber = yield* Effect.fork(executor.run(yield* executor.resolve(request)))
        const command = yield* control.next
        expect(command.command).toBe(request.command)
        yield* command.writeStdout("out\n")
        yield* command.exit(4)
        expect(yield* Fiber.join(fiber)).toMatchObject({ exitCode: 4, signal: null, stdout: { text: "out\n" } })
        expect(yield* command.ran).toBe(true)
        expect(yield* control.execs).toBe(execs)
      }
    }))

  it.scoped("a served call interrupted before its pid line runs nothing: its leader never gets the host's go", () =>
    Effect.gen(function*() {
      const { control, executor } = yield* build(() => ({ onTerm: "ignore", holdStart: true }))
      const fiber = yield* Effect.fork(executor.run(yield* executor.resolve({ command: "held" })))
      const command = yield* control.next
      yield* Fiber.interrupt(fiber)
      expect(yield* command.ran).toBe(false)
      expect(yield* command.alive).toBe(false)
      expect(yield* command.signals).toEqual([])
    }))

  it.scoped("calls one after another in a box reuse one served exec: no exec of the engine's per call", () =>
    Effect.gen(function*() {
      const { control, executor } = yield* build(() => ({ onTerm: "obey" }))
      for (const code of [0, 1, 2]) {
        const fiber = yield* Effect.fork(executor.run(yield* executor.resolve({ command: `exit ${code}` })))
        const command = yield* control.next
        yield* command.writeStdout(`out ${code}\n`)
        yield* command.exit(code)
        const result = yield* Fiber.join(fiber)
        expect(result).toMatchObject({ exitCode: code, signal: null })
        expect(result.stdout.text).toBe(`out ${code}\n`)
        expect(yield* command.ran).toBe(true)
      }
      expect(yield* control.execs).toBe(1)
    }))

  it.scoped("a served exec that died while it waited is replaced, and the call runs once", () =>
    Effect.gen(function*() {
      const { control, executor } = yield* build(() => ({ onTerm: "obey" }))
      const first = yield* Effect.fork(executor.run(yield* executor.resolve({ command: "true" })))
      yield* (yield* control.next).exit(0)
      yield* Fiber.join(first)
      expect(yield* control.waiting).toBe(1)
      yield* control.killWaiting
      const second = yield* Effect.fork(executor.run(yield* executor.resolve({ command: "echo again" })))
      const command = yield* control.next
      yield* command.writeStdout("again\n")
      yield* command.exit(0)
      const result = yield* Fiber.join(second)
      expect(result).toMatchObject({ exitCode: 0, stdout: { text: "again\n" } })
      expect(yield* control.execs).toBe(2)
    }))

  it.scoped("a served exec the engine refuses fails the call with the engine's word, and the next call gets one", () =>
    Effect.gen(function*() {
      const { control, executor } = yield* build(() => ({ onTerm: "obey" }))
      yield* control.refuseExecs(1)
      const refused = yield* Effect.flip(executor.run(yield* executor.resolve({ command: "true" })))
      expect(refused.message).toContain("the fake engine refused the exec")
      const next = yield* Effect.fork(executor.run(yield* executor.resolve({ command: "true" })))
      yield* (yield* control.next).exit(0)
      expect((yield* Fiber.join(next)).exitCode).toBe(0)
    }))

  it.scoped("a served call whose box goes ends killed, with the note, and the next call gets a new box", () =>
    Effect.gen(function*() {
      const { control, engine, executor } = yield* build(() => ({ onTerm: "obey" }))
      const fiber = yield* Effect.fork(executor.run(yield* executor.resolve({ command: "sleep 100" })))
      const command = yield* control.next
      yield* command.writeStdout("started\n")
      yield* engine.removeBox(command.box)
      const result = yield* Fiber.join(fiber)
      expect(result).toMatchObject({ exitCode: null, signal: "SIGKILL" })
      expect(result.stderr.text).toContain(`the container ${command.box.slice(0, 12)} was removed while the command ran`)
      const next = yield* Effect.fork(executor.run(yield* executor.resolve({ command: "true" })))
      const second = yield* control.next
      expect(second.box).not.toBe(command.box)
      yield* second.exit(0)
      expect((yield* Fiber.join(next)).exitCode).toBe(0)
    }))

  it.scoped("a served exec waiting in a box paused from outside: after a second without its pid the call fails as paused, and its command never runs", () =>
    Effect.gen(function*() {
      const { control, executor } = yield* build(() => ({ onTerm: "obey" }))
      const run = (command: string) => Effect.flatMap(executor.resolve({ command }), executor.run)
      // Two calls at once leave two served execs waiting.
      const both = yield* Effect.fork(Effect.all([run("a"), run("b")], { concurrency: 2 }))
      const [a, b] = [yield* control.next, yield* control.next]
      yield* a.exit(0)
      yield* b.exit(0)
      yield* Fiber.join(both)
      expect(yield* control.waiting).toBe(2)
      yield* control.pause(a.box, true)
      const frozen = yield* Effect.fork(Effect.flip(run("held")))
      let failure = yield* Fiber.poll(frozen)
      for (let step = 0; step < 40 && failure._tag === "None"; step++) {
        yield* TestClock.adjust(100)
        failure = yield* Fiber.poll(frozen)
      }
      const error = yield* Fiber.join(frozen)
      expect(error.message).toContain("the container is paused")
      yield* control.pause(a.box, false)
      // Unpaused, the closed exec ran nothing: the next command is the next call's.
      const next = yield* Effect.fork(run("after"))
      const command = yield* control.next
      expect(command.command).toBe("after")
      yield* command.exit(0)
      expect((yield* Fiber.join(next)).exitCode).toBe(0)
    }))

  it.scoped("a served exec waits at most its idle time, by the Clock, and is closed", () =>
    Effect.gen(function*() {
      const { control, executor } = yield* build(() => ({ onTerm: "obey" }))
      const first = yield* Effect.fork(executor.run(yield* executor.resolve({ command: "true" })))
      yield* (yield* control.next).exit(0)
      yield* Fiber.join(first)
      yield* TestClock.adjust(idleMs - 1)
      expect(yield* control.waiting).toBe(1)
      yield* TestClock.adjust(1)
      expect(yield* control.waiting).toBe(0)
      const second = yield* Effect.fork(executor.run(yield* executor.resolve({ command: "true" })))
      yield* (yield* control.next).exit(0)
      yield* Fiber.join(second)
      expect(yield* control.execs).toBe(2)
    }))

  it.scoped("the layer's close removes its boxes", () =>
    Effect.gen(function*() {
      const { control, executor, scope } = yield* build(() => ({ onTerm: "obey" }))
      const fiber = yield* Effect.fork(executor.run(yield* executor.resolve({ command: "true" })))
      const command = yield* control.next
      yield* command.exit(0)
      yield* Fiber.join(fiber)
      expect((yield* control.boxes).map((box) => box.removed)).toEqual([false])
      yield* Scope.close(scope, Exit.void)
      expect((yield* control.boxes).map((box) => box.removed)).toEqual([true])
    }))
})

describe("the sweep of dead hosts' boxes, by their labels (fake engine)", () => {
  const boot = fs.readFileSync("/proc/sys/kernel/random/boot_id", "utf8").trim()
  const namespace = /\d+/.exec(fs.readlinkSync("/proc/self/ns/pid"))![0]
  const startTime = (pid: number) => fs.readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ")[19]!
  /** This process, as a host names itself; with `dead`, a host that had its pid and another start time. */
  const host = (dead: boolean) => `effect-bash-${namespace}-${process.pid}-${dead ? "1" : startTime(process.pid)}-`
  const box = (engine: ContainerEngine.Service, name: string, owner: Record<string, string>) =>
    engine.createBox({
      image: "fake",
      labels: { "effect-bash": "1", "effect-bash.session": name, "effect-bash.hostname": os.hostname(), ...owner },
      mounts: [],
      network: "none",
      user: "1000:1000",
      readOnlyRootfs: false,
      seccompProfile: "{}",
      dropCapabilities: true,
      supervisorDir: { path: "/s", uid: 1 }
    })

  it.scoped("a dead host of this boot loses its boxes; a live one and one of another boot keep theirs", () =>
    Effect.gen(function*() {
      const { control } = yield* build(() => ({ onTerm: "obey" }), (engine) =>
        Effect.all([
          box(engine, "dead", { "effect-bash.boot": boot, "effect-bash.host": host(true) }),
          box(engine, "live", { "effect-bash.boot": boot, "effect-bash.host": host(false) }),
          // Another machine with the same hostname, in its initial pid namespace as this one is.
          box(engine, "other-machine", { "effect-bash.boot": "another-boot", "effect-bash.host": host(true) })
        ], { discard: true }))
      const left = (yield* control.boxes).filter((each) => !each.removed).map((each) => each.options.labels["effect-bash.session"])
      expect(left).toEqual(["live", "other-machine"])
    }))
})
