/**
 * A host killed with SIGKILL (no finalizer runs) takes its terminals along: the PTY spawner's reaper
 * kills the shell, its jobs that ignore the hangup, its `setsid` children that keep the PTY as their
 * stdio and their descendants — read from /proc here, not by the code under test. A terminal in a
 * container's box goes too: its probe in the box sees the host's end of its input close.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { execFileSync, spawn } from "node:child_process"
import { once } from "node:events"
import * as path from "node:path"
import { dockerUnavailable, testImage } from "../support/docker.js"
import { startOwnDockerd } from "../support/ownDockerd.js"
import { pollUntil } from "../support/poll.js"
import { childrenOf, commandLineOf, isAlive, isReaperCommandLine, liveProcesses } from "../support/processes.js"

const fixture = path.join(import.meta.dirname, "..", "support", "fixtures", "terminal-host.mjs")
const boxFixture = path.join(import.meta.dirname, "..", "support", "fixtures", "terminal-box-host.mjs")

/** Polls every 10 ms, for at most `boundMs`, until `done` holds; returns its last answer. */
const eventually = <A>(probe: () => A, done: (value: A) => boolean, boundMs = 10_000) =>
  Effect.promise(() => pollUntil(probe, done, boundMs, 10))

const killAll = (pids: Iterable<number>) => {
  for (const pid of pids) {
    try {
      process.kill(pid, "SIGKILL")
    } catch {
      // Already gone.
    }
  }
}

describe("host death with an open terminal", () => {
  it.scopedLive("SIGKILL of the host leaves no process of its terminal, setsid children included", () =>
    Effect.gen(function*() {
      // A tag of our own, so the sleeps are ours: 5 digits, then the fixture adds one.
      const tag = String(10_000 + (process.pid % 89_999))
      // The sleeps, and the setsid bash that waits for the third.
      const pattern = new RegExp(`^(?:sleep ${tag}[1-4]|bash -c trap '' HUP; sleep ${tag}3 & wait)$`)
      const sleeps = () =>
        liveProcesses().filter((row) => pattern.test(commandLineOf(row.pid)))
      const host = spawn(process.execPath, [fixture, tag], { stdio: ["ignore", "pipe", "inherit"] })
      let shell = 0
      yield* Effect.addFinalizer(() =>
        Effect.sync(() => {
          host.kill("SIGKILL")
          killAll([shell, ...sleeps().map((row) => row.pid)].filter((pid) => pid > 0))
        })
      )
      let output = ""
      host.stdout.setEncoding("utf8").on("data", (chunk: string) => (output += chunk))
      expect(yield* eventually(() => output, (seen) => seen.includes("ready\n"), 20_000)).toContain("ready\n")
      shell = Number(/^shell (\d+)$/m.exec(output)![1])
      // Each way out of the hangup runs: four sleeps and the bash that waits for the third.
      const running = yield* eventually(sleeps, (rows) => rows.length === 5)
      expect(running).toHaveLength(5)
      expect(running.some((row) => row.sid !== shell), "a setsid child left the session").toBe(true)
      const reapers = childrenOf(host.pid!).filter((pid) => isReaperCommandLine(commandLineOf(pid)))
      expect(reapers).toHaveLength(1)

      host.kill("SIGKILL")
      yield* Effect.promise(() => once(host, "exit"))

      expect(yield* eventually(sleeps, (rows) => rows.length === 0)).toEqual([])
      expect(yield* eventually(() => isAlive(shell), (alive) => !alive), "the shell is gone").toBe(false)
      expect(yield* eventually(() => isAlive(reapers[0]!), (alive) => !alive), "the reaper ends").toBe(false)
    }))
})

describe.skipIf(dockerUnavailable !== undefined)("host death with an open terminal in a container's box", () => {
  // A dockerd of the test's own: on a shared engine, another test's layer would sweep the dead host's
  // box (as it should) before the test could look into it.
  it.scopedLive("SIGKILL of the host leaves no process of its terminal in the box, its probe included", () =>
    Effect.gen(function*() {
      const engine = yield* Effect.acquireRelease(
        Effect.promise(() => startOwnDockerd("tdeath", testImage)),
        (engine) => Effect.promise(engine.stop)
      )
      const docker = (...args: ReadonlyArray<string>) => execFileSync("docker", ["-H", engine.address, ...args], { encoding: "utf8" })
      const tag = String(10_000 + (process.pid % 89_999))
      const session = "terminal-host-death"
      const host = spawn(process.execPath, [boxFixture, session, tag, engine.address], { stdio: ["ignore", "pipe", "inherit"] })
      yield* Effect.addFinalizer(() => Effect.sync(() => host.kill("SIGKILL")))
      let output = ""
      host.stdout.setEncoding("utf8").on("data", (chunk: string) => (output += chunk))
      expect(yield* eventually(() => output, (seen) => seen.includes("ready\n"), 60_000)).toContain("ready\n")
      const [box] = docker("ps", "-q", "--no-trunc", "--filter", `label=effect-bash.session=${session}`).split("\n").filter((line) => line !== "")
      expect(box).toBeDefined()
      const terminal = () =>
        docker("top", box!, "-eo", "pid,args").split("\n").slice(1).map((line) => line.trim().replace(/^\d+\s+/, "")).filter((args) =>
          args === `sleep ${tag}1` || args === `sleep ${tag}2` || args.startsWith(`bash -c trap '' HUP; sleep ${tag}2`) ||
          /(^|\/)bash --noprofile --norc -i$/.test(args) || args.includes("effect-bash-terminal-probe")
        )
      // The shell, its probe, and the two sleeps that ignore the hangup (one under a bash that does too).
      expect(yield* eventually(terminal, (rows) => rows.length === 5)).toHaveLength(5)

      host.kill("SIGKILL")
      yield* Effect.promise(() => once(host, "exit"))

      expect(yield* eventually(terminal, (rows) => rows.length === 0, 20_000)).toEqual([])
    }))
})
