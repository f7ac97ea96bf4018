/**
 * The host's side of the launcher keeps its bounds by the Clock: driven here over a stand-in for the
 * launcher process (no process starts), a TestClock decides when it stops waiting for the launcher
 * to start, when it sends a batch of forgotten groups, and when it kills a launcher that does not
 * exit on close.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, TestClock } from "effect"
import { EventEmitter } from "node:events"
import type * as ChildProcess from "node:child_process"
import { PassThrough } from "node:stream"
import { startLauncher } from "../../src/layers/internal/spawner/Launcher.js"

/** A pipe end as the host holds it: a stream it can ref and unref. */
class HeldPipe extends PassThrough {
  ref(): this {
    return this
  }
  unref(): this {
    return this
  }
}

/** The launcher process as `startLauncher` sees it: what the host sends it, the signals it gets. */
class LauncherStandIn extends EventEmitter {
  readonly pid = 2_000_000_000
  readonly stdin = new HeldPipe()
  readonly stdout = new HeldPipe()
  readonly sent: Array<unknown> = []
  readonly signals: Array<string> = []
  connected = true
  send(message: unknown): boolean {
    this.sent.push(message)
    return true
  }
  kill(signal: string): boolean {
    this.signals.push(signal)
    return true
  }
  disconnect(): void {
    this.connected = false
  }
  ref(): void {}
  unref(): void {}
}

// As the layer starts it: the runtime is captured where interruption is off.
const started = Effect.gen(function*() {
  const helper = new LauncherStandIn()
  const runtime = yield* Effect.uninterruptible(Effect.runtime<never>())
  const launcher = startLauncher(helper as unknown as ChildProcess.ChildProcess, runtime, () => {}, () => {})
  return { helper, launcher }
})

/** Lets the callbacks of what the clock just woke run. */
const settle = Effect.promise(() => Promise.resolve())

describe("the launcher's host side on the Clock", () => {
  it.effect("stops waiting for a launcher that is not ready after 2 s of the Clock", () =>
    Effect.gen(function*() {
      const { launcher } = yield* started
      let ready: boolean | undefined
      void launcher.started.then((value) => (ready = value))
      yield* TestClock.adjust(1_999)
      yield* settle
      expect(ready).toBeUndefined()
      yield* TestClock.adjust(1)
      yield* settle
      expect(ready).toBe(false)
    }))

  it.effect("sends forgotten groups 20 ms after the first, in one message, when no launch carries them", () =>
    Effect.gen(function*() {
      const { helper, launcher } = yield* started
      launcher.forget(101)
      yield* TestClock.adjust(10)
      launcher.forget(102)
      yield* TestClock.adjust(9)
      expect(helper.sent).toEqual([])
      yield* TestClock.adjust(1)
      expect(helper.sent).toEqual([{ _tag: "Forget", forget: [101, 102] }])
    }))

  it.effect("on close, kills a launcher that has not exited 1 s later, and is done once it has", () =>
    Effect.gen(function*() {
      const { helper, launcher } = yield* started
      const closed = launcher.close()
      expect(helper.sent).toEqual([{ _tag: "Goodbye" }])
      yield* TestClock.adjust(999)
      expect(helper.signals).toEqual([])
      yield* TestClock.adjust(1)
      expect(helper.signals).toEqual(["SIGKILL"])
      helper.emit("exit", null, "SIGKILL")
      helper.stdout.emit("close")
      yield* Effect.promise(() => closed)
    }))

  it.effect("on close, a launcher that exits in time is not killed, and nothing of the close waits on", () =>
    Effect.gen(function*() {
      const { helper, launcher } = yield* started
      const closed = launcher.close()
      yield* TestClock.adjust(500)
      helper.emit("exit", 0, null)
      helper.stdout.emit("close")
      yield* Effect.promise(() => closed)
      yield* TestClock.adjust(60_000)
      yield* settle
      expect(helper.signals).toEqual([])
    }))

  it.effect("a launch answered in time leaves no look at the launcher behind", () =>
    Effect.gen(function*() {
      const { helper, launcher } = yield* started
      helper.emit("message", { _tag: "Ready" })
      const results: Array<string> = []
      launcher.launch(
        { file: "bash", args: [], cwd: "/", env: {}, stdio: ["ignore", "pipe", "pipe"] },
        (result) => results.push(result._tag)
      )
      helper.emit("message", { _tag: "SpawnFailed", id: 0, code: "ENOENT", message: "no bash" })
      expect(results).toEqual(["SpawnFailed"])
      // A look still armed would read the stand-in's pid in /proc and sleep 5 s again, for ever.
      yield* TestClock.adjust(60_000)
      expect(Array.from(yield* TestClock.sleeps())).toEqual([])
    }))
})
