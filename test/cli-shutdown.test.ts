/**
 * The CLI's shutdown escalation (`src/cli/shutdown.ts`) with a fake signal source and TestClock, and
 * once through the built CLI with real signals.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Exit, Fiber, Scope, TestClock } from "effect"
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import type { SignalSource } from "../src/cli/shutdown.js"
import { makeShutdown } from "../src/cli/shutdown.js"
import { eventually, membersOfGroups, startCli } from "./cli-support.js"

/** A signal source a test fires by hand. */
const fakeSignals = () => {
  const listeners = new Set<() => void>()
  const source: SignalSource = { on: (listener) => listeners.add(listener), off: (listener) => listeners.delete(listener) }
  return { source, listeners, fire: () => Effect.sync(() => [...listeners].forEach((listener) => listener())) }
}

/** Whether the shutdown has escalated, after letting its fibers run. */
const escalated = (escalation: Effect.Effect<void>) =>
  Effect.gen(function*() {
    const fiber = yield* Effect.fork(escalation)
    yield* Effect.yieldNow()
    const done = fiber.unsafePoll() !== null
    yield* Fiber.interrupt(fiber)
    return done
  })

describe("CLI shutdown escalation (TestClock)", () => {
  it.scoped("the first signal starts a graceful shutdown; the second escalates at once", () =>
    Effect.gen(function*() {
      const signals = fakeSignals()
      const shutdown = yield* makeShutdown({ signals: signals.source })
      yield* signals.fire()
      expect(yield* escalated(shutdown.escalation)).toBe(false)
      yield* signals.fire()
      expect(yield* escalated(shutdown.escalation)).toBe(true)
    }))

  it.scoped("a signal after the command began its own shutdown escalates at once", () =>
    Effect.gen(function*() {
      const signals = fakeSignals()
      const shutdown = yield* makeShutdown({ signals: signals.source })
      yield* shutdown.begin
      expect(yield* escalated(shutdown.escalation)).toBe(false)
      yield* signals.fire()
      expect(yield* escalated(shutdown.escalation)).toBe(true)
    }))

  it.scoped("the deadline escalates exactly deadlineMs after the shutdown began, and not before it began", () =>
    Effect.gen(function*() {
      const signals = fakeSignals()
      const shutdown = yield* makeShutdown({ signals: signals.source, deadlineMs: 1000 })
      yield* TestClock.adjust(5000)
      expect(yield* escalated(shutdown.escalation)).toBe(false)
      yield* shutdown.begin
      yield* TestClock.adjust(999)
      expect(yield* escalated(shutdown.escalation)).toBe(false)
      yield* TestClock.adjust(1)
      expect(yield* escalated(shutdown.escalation)).toBe(true)
    }))

  it.effect("stops listening when its scope closes", () =>
    Effect.gen(function*() {
      const signals = fakeSignals()
      const scope = yield* Scope.make()
      yield* makeShutdown({ signals: signals.source }).pipe(Scope.extend(scope))
      expect(signals.listeners.size).toBe(1)
      yield* Scope.close(scope, Exit.void)
      expect(signals.listeners.size).toBe(0)
    }))
})

describe("effect-bash run: a second signal escalates at once (real process)", () => {
  it.live("a TERM-ignoring command with a 30 s grace dies at the second SIGINT, not after the grace", () =>
    Effect.promise(async () => {
      const workdir = mkdtempSync(join(tmpdir(), "effect-bash-shutdown-"))
      const pidFile = join(workdir, "stubborn.pid")
      const { child, done } = startCli(
        ["run", "--grace-ms", "30000", "--workdir", workdir, "--", `trap '' TERM; echo $$ > ${pidFile}; sleep 60 & wait`],
        { limitMs: 20_000 }
      )
      let shell: number | undefined
      try {
        await eventually(() => existsSync(pidFile) && readFileSync(pidFile, "utf8").endsWith("\n"), 15_000)
        expect(readFileSync(pidFile, "utf8")).toMatch(/^\d+\n$/)
        shell = Number(readFileSync(pidFile, "utf8"))
        const group = [shell]
        expect(await eventually(() => membersOfGroups(group).length === 2)).toBe(true)
        child.kill("SIGINT")
        // The first signal starts a graceful shutdown: the group got SIGTERM and ignores it.
        await new Promise((resolve) => setTimeout(resolve, 300))
        expect(membersOfGroups(group)).toHaveLength(2)
        child.kill("SIGINT")
        // Bounded well below the 30 s grace (the run is SIGKILLed at 20 s by startCli's limit).
        const outcome = await done
        expect(outcome).toMatchObject({ code: 130, signal: null })
        expect(outcome.elapsedMs).toBeLessThan(15_000)
        expect(membersOfGroups(group)).toEqual([])
      } finally {
        // Only when the test failed is anything left to kill.
        if (shell !== undefined && membersOfGroups([shell]).length > 0) process.kill(-shell, "SIGKILL")
        rmSync(workdir, { recursive: true, force: true })
      }
    }))
})
