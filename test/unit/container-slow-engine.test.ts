/**
 * An engine that stops answering (a hung or stopped daemon), on a fake engine driven by TestClock:
 * every request waits at most `engineTimeoutMs`, a call in flight ends at its own timeout plus that
 * bound, killed, with the engine-lost note, and its box is taken as lost (the session's next call,
 * once the engine answers, gets a new one); an interrupted call and the layer's close end within the
 * bound too, and what the close could not remove the next layer's sweep removes. No engine, no
 * processes, no real time.
 */
import { afterAll, describe, expect, it } from "@effect/vitest"
import { Context, Effect, Exit, Fiber, Layer, Logger, Option, Scope, TestClock } from "effect"
import * as DockerBashExecutor from "../../src/layers/DockerBashExecutor.js"
import { engineLostText } from "../../src/layers/internal/container/spawnNotes.js"
import { BashExecutor } from "../../src/services/BashExecutor.js"
import type { ContainerEngine } from "../../src/services/ContainerEngine.js"
import * as FakeContainerEngine from "../../src/testing/FakeContainerEngine.js"
import { tempDirs } from "../support/tempDirs.js"

const timeoutMs = 1_000
const graceMs = 3_000
const engineTimeoutMs = 5_000
const notAnswered = (what: string) => `${what}: the container engine at fake://engine did not answer within ${engineTimeoutMs} ms`

const dirs = tempDirs("effect-bash-slow-engine")
afterAll(dirs.removeAll)

type Fake = Context.Context<ContainerEngine | FakeContainerEngine.FakeContainerEngineControl>

/** A fake engine that outlives the executor layers a test builds on it. */
const fakeEngine = Effect.map(
  Layer.build(FakeContainerEngine.layer(() => ({ onTerm: "ignore" }))),
  (fake) => ({ fake, control: Context.get(fake, FakeContainerEngine.FakeContainerEngineControl) })
)

/**
 * The executor on `fake`, in a scope of its own that the test may close (the engine answers again
 * first, so a failed test's close does not wait on a clock nobody moves).
 */
const executorOn = (fake: Fake, settings: Partial<DockerBashExecutor.Settings.Input> = {}) =>
  Effect.gen(function*() {
    const scope = yield* Scope.make()
    yield* Effect.addFinalizer(() => Scope.close(scope, Exit.void))
    yield* Effect.addFinalizer(() => Context.get(fake, FakeContainerEngine.FakeContainerEngineControl).hang(false))
    const layer = DockerBashExecutor.layerWithEngine({ image: "fake", cwd: "/work/project", workspace: "volume", timeoutMs, graceMs, engineTimeoutMs, ...settings })
    const context = yield* Layer.buildWithScope(Layer.provide(layer, Layer.succeedContext(fake)), scope)
    return { executor: Context.get(context, BashExecutor), scope }
  })

/** The warnings logged while `effect` runs, layers it builds included. */
const warnings: Array<string> = []
const capturingWarnings = Logger.replace(Logger.defaultLogger, Logger.make(({ logLevel, message }) => {
  if (logLevel._tag === "Warning") warnings.push((message as ReadonlyArray<unknown>).join(" "))
}))

const run = (executor: BashExecutor["Type"], command: string, stdin?: string) =>
  Effect.flatMap(executor.resolve({ command, ...(stdin === undefined ? {} : { stdin }) }), executor.run)

/** The effect forked, not done `engineTimeoutMs - 1` ms later, done 1 ms after that. */
const doneAtTheBound = <A, E>(fiber: Fiber.Fiber<A, E>) =>
  Effect.gen(function*() {
    yield* TestClock.adjust(engineTimeoutMs - 1)
    expect(Option.isNone(yield* Fiber.poll(fiber))).toBe(true)
    yield* TestClock.adjust(1)
    expect(Option.isSome(yield* Fiber.poll(fiber))).toBe(true)
  })

describe("an engine that stops answering (fake engine, TestClock)", () => {
  it.scoped("a request it does not answer fails at engineTimeoutMs, naming the engine", () =>
    Effect.gen(function*() {
      const { control, fake } = yield* fakeEngine
      const { executor } = yield* executorOn(fake)
      yield* control.hang(true)
      const fiber = yield* Effect.fork(Effect.flip(run(executor, "true")))
      yield* doneAtTheBound(fiber)
      expect((yield* Fiber.join(fiber)).message).toContain(notAnswered("container create"))
      expect(yield* control.boxes).toEqual([])
    }))

  it.scoped("a call whose shell's start the engine does not carry fails at the bound", () =>
    Effect.gen(function*() {
      const { control, fake } = yield* fakeEngine
      const { executor } = yield* executorOn(fake)
      // A warm box, whose served exec waits for the next call: taking it asks nothing of the engine.
      const warm = yield* Effect.fork(run(executor, "true"))
      const first = yield* control.next
      yield* first.exit(0)
      expect((yield* Fiber.join(warm)).exitCode).toBe(0)
      expect(yield* control.waiting).toBe(1)

      yield* control.hang(true)
      const fiber = yield* Effect.fork(Effect.flip(run(executor, "true")))
      yield* doneAtTheBound(fiber)
      expect((yield* Fiber.join(fiber)).message).toContain(
        `the command's shell did not start within ${engineTimeoutMs} ms in container ${first.box.slice(0, 12)}`
      )
    }))

  it.scoped("a call in flight ends at its timeout plus the bound, killed, saying so; the next call gets a new box", () =>
    Effect.gen(function*() {
      const { control, fake } = yield* fakeEngine
      const { executor } = yield* executorOn(fake)
      const fiber = yield* Effect.fork(run(executor, "sleep 100"))
      const command = yield* control.next
      // Once the command runs (a served call's output waits for the host's `go`).
      yield* command.writeStdout("started\n")
      yield* control.hang(true)
      // At the timeout the SIGTERM's request goes out, and is not answered.
      yield* TestClock.adjust(timeoutMs)
      yield* doneAtTheBound(fiber)
      const result = yield* Fiber.join(fiber)
      expect(result).toMatchObject({ timedOut: true, exitCode: null, signal: "SIGKILL", stdout: { text: "started\n" } })
      expect(result.stderr.text).toBe(engineLostText(notAnswered(`SIGTERM to group ${command.pgid}`)))
      // Nothing reached the engine: no SIGKILL was tried on a box taken as lost.
      expect(yield* command.signals).toEqual([])

      yield* control.hang(false)
      const next = yield* Effect.fork(run(executor, "true"))
      const second = yield* control.next
      expect(second.box).not.toBe(command.box)
      yield* second.exit(0)
      expect((yield* Fiber.join(next)).exitCode).toBe(0)
      // The lost box was removed once the engine answered, and what ran in it with it.
      expect((yield* control.boxes).map((box) => [box.id, box.removed])).toEqual([[command.box, true], [second.box, false]])
      expect(yield* command.alive).toBe(false)
    }))

  it.scoped("a call of its own exec (it has stdin) in flight ends the same way", () =>
    Effect.gen(function*() {
      const { control, fake } = yield* fakeEngine
      // A bind workspace, as a local engine has: an exec of the call's own is ended the same way there.
      const { executor } = yield* executorOn(fake, { workspace: "bind", cwd: dirs.fresh("work") })
      const fiber = yield* Effect.fork(run(executor, "cat; sleep 100", "input"))
      const command = yield* control.next
      yield* command.writeStdout("input")
      yield* control.hang(true)
      yield* TestClock.adjust(timeoutMs)
      yield* doneAtTheBound(fiber)
      const result = yield* Fiber.join(fiber)
      expect(result).toMatchObject({ timedOut: true, exitCode: null, signal: "SIGKILL", stdout: { text: "input" } })
      expect(result.stderr.text).toBe(engineLostText(notAnswered(`SIGTERM to group ${command.pgid}`)))

      yield* control.hang(false)
      const next = yield* Effect.fork(run(executor, "cat", "again"))
      const second = yield* control.next
      expect(second.box).not.toBe(command.box)
      yield* second.exit(0)
      expect((yield* Fiber.join(next)).exitCode).toBe(0)
    }))

  it.scoped("an interrupted call whose kill the engine does not answer ends within the bound", () =>
    Effect.gen(function*() {
      const { control, fake } = yield* fakeEngine
      const { executor } = yield* executorOn(fake)
      const fiber = yield* Effect.fork(run(executor, "sleep 100"))
      const command = yield* control.next
      // Once the command runs (a served call's output waits for the host's `go`).
      yield* command.writeStdout("started\n")
      yield* control.hang(true)
      // Interrupted from a fiber of its own: the interrupt waits for the kill in the call's finalizer.
      const interrupting = yield* Effect.fork(Fiber.interrupt(fiber))
      yield* doneAtTheBound(interrupting)
      expect(Exit.isInterrupted(yield* Fiber.join(interrupting))).toBe(true)

      yield* control.hang(false)
      const next = yield* Effect.fork(run(executor, "true"))
      const second = yield* control.next
      expect(second.box).not.toBe(command.box)
      yield* second.exit(0)
      expect((yield* Fiber.join(next)).exitCode).toBe(0)
    }))

  it.scoped("the layer's close ends within the bound, logs what it could not remove, and the next layer's sweep removes it", () =>
    Effect.gen(function*() {
      const { control, fake } = yield* fakeEngine
      const { executor, scope } = yield* executorOn(fake)
      const fiber = yield* Effect.fork(run(executor, "true"))
      const command = yield* control.next
      yield* command.exit(0)
      expect((yield* Fiber.join(fiber)).exitCode).toBe(0)

      yield* control.hang(true)
      warnings.length = 0
      const closing = yield* Effect.fork(Scope.close(scope, Exit.void))
      yield* doneAtTheBound(closing)
      expect(warnings).toEqual([
        `could not remove container ${command.box.slice(0, 12)}; the next container layer on this engine removes it ${notAnswered("container remove")}`
      ])
      expect((yield* control.boxes).map((box) => box.removed)).toEqual([false])

      yield* control.hang(false)
      yield* executorOn(fake)
      expect((yield* control.boxes).map((box) => box.removed)).toEqual([true])
      expect(yield* control.volumes).toEqual([])
    }).pipe(Effect.provide(capturingWarnings)))
})
