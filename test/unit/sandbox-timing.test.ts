/**
 * The sandboxing executor over a fake spawner and TestClock: the same TERM→KILL timing as the local
 * executor through the runner, and a usability probe that is bounded, cached and fails closed.
 */
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import * as NodePath from "@effect/platform-node/NodePath"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Fiber, Layer, Option, TestClock } from "effect"
import type { FakeScript } from "../../src/testing/FakeProcessSpawner.js"
import * as FakeProcessSpawner from "../../src/testing/FakeProcessSpawner.js"
import { FakeSpawnerControl } from "../../src/testing/FakeProcessSpawner.js"
import * as SandboxBashExecutor from "../../src/layers/SandboxBashExecutor.js"
import { BashExecutor, sandboxUnavailableText } from "../../src/services/BashExecutor.js"
import type { ProcessSpawner } from "../../src/services/ProcessSpawner.js"
import { SpawnError } from "../../src/services/ProcessSpawner.js"
import { mountRacePausesMs } from "../../src/layers/internal/sandbox/probe.js"

const timeoutMs = 1_000
const graceMs = 300
const probeTimeoutMs = 2_000

const executorWith = (
  script: (options: ProcessSpawner.Options) => FakeScript,
  config: SandboxBashExecutor.Settings.Input = {}
) =>
  SandboxBashExecutor.layerWith({ graceMs, timeoutMs, probeTimeoutMs, cwd: "/", hide: [], ...config }).pipe(
    Layer.provideMerge(FakeProcessSpawner.layer(script)),
    Layer.provide(Layer.merge(NodeFileSystem.layer, NodePath.layer))
  )

const isProbe = (options: ProcessSpawner.Options) => options.command === "true"

/** Starts a run; answers the runner's probe first when one is due. */
const startRun = (command: string, probe: "answer" | "skip" = "answer") =>
  Effect.gen(function*() {
    const executor = yield* BashExecutor
    const control = yield* FakeSpawnerControl
    const fiber = yield* Effect.fork(executor.run(yield* executor.resolve({ command })))
    if (probe === "answer") {
      const probed = yield* control.next
      expect(isProbe(probed.options)).toBe(true)
      yield* probed.exit({ exitCode: 0, signal: null })
    }
    return { fiber, process: yield* control.next }
  })

/** Answers the next spawn, a probe, as passed; ends the command that follows; the run's result. */
const probePassesThenRuns = (run: Fiber.Fiber<BashExecutor.RunResult, BashExecutor.RunError>, command: string) =>
  Effect.gen(function*() {
    const control = yield* FakeSpawnerControl
    const probe = yield* control.next
    expect(isProbe(probe.options)).toBe(true)
    yield* probe.exit({ exitCode: 0, signal: null })
    const process = yield* control.next
    expect(process.options.command).toBe(command)
    yield* process.exit({ exitCode: 0, signal: null })
    return yield* Fiber.join(run)
  })

describe("SandboxBashExecutor timing (TestClock)", () => {
  it.effect("a TERM-obeying command gets SIGTERM at the timeout, through the runner, and no SIGKILL", () =>
    Effect.gen(function*() {
      const { fiber, process } = yield* startRun("work")
      expect(process.options.wrapper?.pidNamespace).toBe(true)
      expect(process.options.wrapper?.argv).toEqual(expect.arrayContaining(["--unshare-pid", "--die-with-parent"]))
      yield* TestClock.adjust(timeoutMs)
      const result = yield* Fiber.join(fiber)
      expect(yield* process.signals).toEqual([{ signal: "SIGTERM", atMillis: timeoutMs }])
      expect(result).toMatchObject({ timedOut: true, sandbox: { mode: "read-only", denied: false, enforcement: "full" } })
    }).pipe(Effect.provide(executorWith(() => ({ onTerm: "obey" })))))

  it.effect("a TERM-ignoring command gets its full grace before SIGKILL", () =>
    Effect.gen(function*() {
      const { fiber, process } = yield* startRun("work")
      yield* TestClock.adjust(timeoutMs)
      expect(yield* process.signals).toEqual([{ signal: "SIGTERM", atMillis: timeoutMs }])
      yield* TestClock.adjust(graceMs - 1)
      expect(yield* process.signals).toHaveLength(1)
      yield* TestClock.adjust(1)
      yield* Fiber.join(fiber)
      expect(yield* process.signals).toEqual([
        { signal: "SIGTERM", atMillis: timeoutMs },
        { signal: "SIGKILL", atMillis: timeoutMs + graceMs }
      ])
    }).pipe(Effect.provide(executorWith((options) => ({ onTerm: isProbe(options) ? "obey" : "ignore" })))))

  it.effect("probes the runner once and reuses the answer", () =>
    Effect.gen(function*() {
      const first = yield* startRun("one")
      yield* first.process.exit({ exitCode: 0, signal: null })
      yield* Fiber.join(first.fiber)
      const second = yield* startRun("two", "skip")
      expect(second.process.options.command).toBe("two")
      yield* second.process.exit({ exitCode: 0, signal: null })
      yield* Fiber.join(second.fiber)
      expect(yield* (yield* FakeSpawnerControl).spawnCount).toBe(3)
    }).pipe(Effect.provide(executorWith(() => ({ onTerm: "obey" })))))

  it.effect("probes the runner as the layer is built; ready completes with its answer", () =>
    Effect.gen(function*() {
      const executor = yield* BashExecutor
      const control = yield* FakeSpawnerControl
      // Nothing asked for a call or for `ready`: the layer started the probe itself.
      const probe = yield* control.next
      expect(isProbe(probe.options)).toBe(true)
      expect(yield* control.spawnCount).toBe(1)
      const ready = yield* Effect.fork(executor.ready ?? Effect.void)
      expect(Option.isNone(yield* Fiber.poll(ready))).toBe(true)
      yield* probe.exit({ exitCode: 0, signal: null })
      yield* Fiber.join(ready)
      const started = yield* executor.start(yield* executor.resolve({ command: "work" }))
      expect((yield* control.next).options.command).toBe("work")
      expect((yield* started.state).status).toBe("running")
    }).pipe(Effect.provide(executorWith(() => ({ onTerm: "obey" })))))

  it.effect("a caller interrupted during the probe leaves it running for the next caller", () =>
    Effect.gen(function*() {
      const executor = yield* BashExecutor
      const control = yield* FakeSpawnerControl
      const first = yield* Effect.fork(executor.run(yield* executor.resolve({ command: "one" })))
      const probe = yield* control.next
      yield* Fiber.interrupt(first)
      const second = yield* Effect.fork(executor.run(yield* executor.resolve({ command: "two" })))
      yield* probe.exit({ exitCode: 0, signal: null })
      const process = yield* control.next
      expect(process.options.command).toBe("two")
      yield* process.exit({ exitCode: 0, signal: null })
      expect((yield* Fiber.join(second)).sandbox).toMatchObject({ mode: "read-only", denied: false })
    }).pipe(Effect.provide(executorWith(() => ({ onTerm: "obey" })))))

  it.effect("a probe that hangs is killed at its bound and the call fails closed", () =>
    Effect.gen(function*() {
      const executor = yield* BashExecutor
      const control = yield* FakeSpawnerControl
      const fiber = yield* Effect.fork(executor.run(yield* executor.resolve({ command: "work" })).pipe(Effect.flip))
      const probe = yield* control.next
      yield* TestClock.adjust(probeTimeoutMs)
      expect(yield* probe.signals).toEqual([{ signal: "SIGTERM", atMillis: probeTimeoutMs }])
      const error = yield* Fiber.join(fiber)
      expect(error).toMatchObject({ _tag: "SandboxUnavailableError", code: "SANDBOX_UNAVAILABLE" })
      expect(error.message).toBe(sandboxUnavailableText("read-only"))
      expect(yield* control.spawnCount).toBe(1)
    }).pipe(Effect.provide(executorWith(() => ({ onTerm: "obey" })))))

  const mountRace =
    "bwrap: Can't bind mount /oldroot/ on /newroot/: Unable to apply mount flags: remount \"/newroot/var/lib/docker/overlay2/x/merged\": Invalid argument\n"

  it.effect("a probe that meets a mount race is started again after a pause, and the call runs once it passes", () =>
    Effect.gen(function*() {
      const executor = yield* BashExecutor
      const control = yield* FakeSpawnerControl
      const fiber = yield* Effect.fork(executor.run(yield* executor.resolve({ command: "work" })))
      const raced = yield* control.next
      yield* raced.writeStderr(mountRace)
      yield* raced.exit({ exitCode: 1, signal: null })
      yield* TestClock.adjust(mountRacePausesMs[0]! - 1)
      expect(yield* control.spawnCount).toBe(1)
      yield* TestClock.adjust(1)
      expect((yield* probePassesThenRuns(fiber, "work")).sandbox).toMatchObject({ mode: "read-only", denied: false })
    }).pipe(Effect.provide(executorWith(() => ({ onTerm: "obey" })))))

  it.effect("a probe that meets a mount race at each of its attempts fails closed, and the next call probes again", () =>
    Effect.gen(function*() {
      const executor = yield* BashExecutor
      const control = yield* FakeSpawnerControl
      const fiber = yield* Effect.fork(executor.run(yield* executor.resolve({ command: "work" })).pipe(Effect.flip))
      for (const pause of [...mountRacePausesMs, undefined]) {
        const probe = yield* control.next
        expect(isProbe(probe.options)).toBe(true)
        yield* probe.writeStderr(mountRace)
        yield* probe.exit({ exitCode: 1, signal: null })
        if (pause !== undefined) yield* TestClock.adjust(pause)
      }
      expect((yield* Fiber.join(fiber)).message).toBe(sandboxUnavailableText("read-only"))
      expect(yield* control.spawnCount).toBe(mountRacePausesMs.length + 1)
      // That verdict is not kept: the next confined call probes again, and runs once the probe passes.
      const next = yield* Effect.fork(executor.run(yield* executor.resolve({ command: "again" })))
      expect((yield* probePassesThenRuns(next, "again")).sandbox).toMatchObject({ mode: "read-only", denied: false })
    }).pipe(Effect.provide(executorWith(() => ({ onTerm: "obey" })))))

  it.effect("a probe failing for another reason is not started again, by this call or a later one", () =>
    Effect.gen(function*() {
      const executor = yield* BashExecutor
      const control = yield* FakeSpawnerControl
      const fiber = yield* Effect.fork(executor.run(yield* executor.resolve({ command: "work" })).pipe(Effect.flip))
      const probe = yield* control.next
      yield* probe.writeStderr("bwrap: No permissions to creating new namespace\n")
      yield* probe.exit({ exitCode: 1, signal: null })
      expect((yield* Fiber.join(fiber)).message).toBe(sandboxUnavailableText("read-only"))
      expect(yield* control.spawnCount).toBe(1)
      // That verdict is kept: the next call fails closed without a probe.
      const next = yield* executor.run(yield* executor.resolve({ command: "again" })).pipe(Effect.flip)
      expect(next.message).toBe(sandboxUnavailableText("read-only"))
      expect(yield* control.spawnCount).toBe(1)
    }).pipe(Effect.provide(executorWith(() => ({ onTerm: "obey" })))))

  it.effect("a probe a call starts from an uninterruptible region (a tool's start) is still bounded", () =>
    Effect.gen(function*() {
      const executor = yield* BashExecutor
      const control = yield* FakeSpawnerControl
      // Unconfined by default: the first confined call starts the probe.
      const spec = yield* executor.resolve({ command: "work", sandboxPolicy: { mode: "read-only", workspaceRoot: "/w" } })
      const fiber = yield* Effect.fork(Effect.flip(Effect.uninterruptible(executor.start(spec))))
      const probe = yield* control.next
      expect(isProbe(probe.options)).toBe(true)
      yield* TestClock.adjust(probeTimeoutMs)
      expect(yield* probe.signals).toEqual([{ signal: "SIGTERM", atMillis: probeTimeoutMs }])
      expect(yield* Fiber.join(fiber)).toMatchObject({ _tag: "SandboxUnavailableError" })
    }).pipe(Effect.provide(executorWith(() => ({ onTerm: "obey" }), { sandboxMode: "danger-full-access" }))))

  it.effect("a runner that cannot start fails closed with the exact text and runs nothing", () =>
    Effect.gen(function*() {
      const executor = yield* BashExecutor
      const control = yield* FakeSpawnerControl
      const spec = yield* executor.resolve({ command: "work", sandboxPolicy: { mode: "workspace-write", workspaceRoot: "/w" } })
      const error = yield* Effect.flip(executor.run(spec))
      expect(error.message).toBe(
        "sandbox mode \"workspace-write\" is requested but no sandbox backend is usable on this host; refusing to run the command unconfined. Install bubblewrap or run a Landlock-enforcing kernel (Linux), ensure sandbox-exec is usable (macOS), or ensure the ACL restricted-token runner can start (Windows) — otherwise switch the consumer to danger-full-access."
      )
      expect(yield* Effect.flip(executor.start(spec))).toMatchObject({ _tag: "SandboxUnavailableError" })
      expect(yield* control.spawnCount).toBe(0)
    }).pipe(Effect.provide(executorWith(() => ({
      onTerm: "obey",
      spawnError: new SpawnError({ code: "ENOENT", message: "spawn /nonexistent/bwrap ENOENT" })
    })))))

  it.effect("danger-full-access runs without the runner and still reports its mode", () =>
    Effect.gen(function*() {
      const executor = yield* BashExecutor
      const control = yield* FakeSpawnerControl
      const fiber = yield* Effect.fork(executor.run(yield* executor.resolve({ command: "work" })))
      const process = yield* control.next
      expect(process.options.wrapper).toBeUndefined()
      yield* process.writeStderr("bash: x: Read-only file system\n")
      yield* process.exit({ exitCode: 1, signal: null })
      expect((yield* Fiber.join(fiber)).sandbox).toEqual({ mode: "danger-full-access", denied: false })
      expect(executor.sandboxMode).toBe("danger-full-access")
    }).pipe(Effect.provide(executorWith(() => ({ onTerm: "obey" }), { sandboxMode: "danger-full-access" }))))

  it.effect("a denial is found past the retained stderr tail, and only in a failed run", () =>
    Effect.gen(function*() {
      const denied = yield* startRun("work")
      yield* denied.process.writeStderr("bash: f: Read-Only File System\n")
      yield* denied.process.writeStderr("x".repeat(5_000) + "\n")
      yield* denied.process.exit({ exitCode: 1, signal: null })
      const result = yield* Fiber.join(denied.fiber)
      expect(result.stderr.truncated).toBe(true)
      expect(result.stderr.text).not.toContain("Read-Only")
      expect(result.sandbox).toEqual({ mode: "read-only", denied: true, enforcement: "full" })

      const succeeded = yield* startRun("work", "skip")
      yield* succeeded.process.writeStderr("bash: f: Read-only file system\n")
      yield* succeeded.process.exit({ exitCode: 0, signal: null })
      expect((yield* Fiber.join(succeeded.fiber)).sandbox?.denied).toBe(false)
    }).pipe(Effect.provide(executorWith(() => ({ onTerm: "obey" }), { maxOutputBytes: 1_000 }))))

  it.effect("a runner failure fails the call with SANDBOX_UNAVAILABLE and the runner's line", () =>
    Effect.gen(function*() {
      const { fiber, process } = yield* startRun("work")
      yield* process.writeStderr("bwrap: Can't find source path /w: No such file or directory\n")
      yield* process.exit({ exitCode: 1, signal: null })
      const error = yield* Effect.flip(Fiber.join(fiber))
      expect(error.message).toBe(
        `${sandboxUnavailableText("read-only")} Runner failure: bwrap: Can't find source path /w: No such file or directory`
      )
    }).pipe(Effect.provide(executorWith(() => ({ onTerm: "obey" })))))

  it.effect("a background runner failure settles with runnerFailed", () =>
    Effect.gen(function*() {
      const executor = yield* BashExecutor
      const control = yield* FakeSpawnerControl
      const started = yield* Effect.fork(executor.start(yield* executor.resolve({ command: "work" })))
      yield* (yield* control.next).exit({ exitCode: 0, signal: null })
      const handle = yield* Fiber.join(started)
      const process = yield* control.next
      yield* process.writeStderr("bwrap: execvp bash: No such file or directory\n")
      yield* process.exit({ exitCode: 1, signal: null })
      expect((yield* handle.done).sandbox).toEqual({ mode: "read-only", denied: false, enforcement: "full", runnerFailed: true })
    }).pipe(Effect.provide(executorWith(() => ({ onTerm: "obey" })))))
})
