/**
 * A host that dies without running any code of ours — SIGKILL (the OOM killer, an MCP client's
 * last resort), or SIGHUP of the CLI — leaves no member of any of its groups alive and no spill
 * directory behind; and a new layer sweeps the spill directories of hosts that died before.
 */
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import * as NodePath from "@effect/platform-node/NodePath"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js"
import { describe, expect, it } from "@effect/vitest"
import { Context, Effect, Exit, Layer, Logger, Scope } from "effect"
import type { ChildProcess } from "node:child_process"
import { spawn } from "node:child_process"
import { once } from "node:events"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import * as FakeProcessSpawner from "../../src/testing/FakeProcessSpawner.js"
import * as LocalBashExecutor from "../../src/layers/LocalBashExecutor.js"
import { ownedPrefix } from "../../src/layers/internal/executor/spillOwner.js"
import { BashExecutor } from "../../src/services/BashExecutor.js"
import { cleanEnv, cliPath, startCli } from "../support/cli.js"
import { pollUntil } from "../support/poll.js"
import { commandLineOf, isAlive, isReaperCommandLine, liveMembers, liveMembersOf, liveProcesses, processTable, stateOf } from "../support/processes.js"

const fixture = path.join(import.meta.dirname, "..", "support", "fixtures", "host.mjs")

const tempDir = (name: string) => fs.mkdtempSync(path.join(os.tmpdir(), `effect-bash-test-${name}-`))

/** Process groups of the direct children of `pid` (from /proc, not by the code under test). */
const childGroups = (pid: number): ReadonlyArray<number> =>
  [...new Set(processTable().filter((row) => row.ppid === pid).map((row) => row.pgid))]

/** Polls every 10 ms, for at most `boundMs`, until `done` holds; returns its last answer. */
const eventually = <A>(probe: () => A, done: (value: A) => boolean, boundMs = 10_000) =>
  Effect.promise(() => pollUntil(probe, done, boundMs, 10))

const survivors = (groups: ReadonlyArray<number>) => liveMembersOf(groups)

const readPids = (pidDir: string) =>
  fs.readdirSync(pidDir).map((name) => Number(fs.readFileSync(path.join(pidDir, name), "utf8")))

// A host starts in about a second, but give a loaded machine 20 s.
const startupMs = 20_000

/** A temporary directory removed, with anything left in it, when the scope closes. */
const scopedTempDir = (name: string) =>
  Effect.acquireRelease(
    Effect.sync(() => tempDir(name)),
    (dir) => Effect.sync(() => fs.rmSync(dir, { recursive: true, force: true }))
  )

/** SIGKILLs each pid in `pids` (a negative one is a group) that is still there. */
const killAll = (pids: Iterable<number>) => {
  for (const pid of pids) {
    try {
      process.kill(pid, "SIGKILL")
    } catch {
      // Already gone.
    }
  }
}

/** When the test fails, SIGKILL the host and the groups it reported, so a failure leaves nothing running. */
const killOnFailure = (host: ChildProcess, pidDir: string) =>
  Effect.addFinalizer((exit) =>
    Effect.sync(() => {
      if (Exit.isSuccess(exit)) return
      host.kill("SIGKILL")
      killAll(readPids(pidDir).map((pgid) => -pgid))
    })
  )

/**
 * Starts the fixture host in `mode` with `pidDir` and waits until it prints "ready"; its stdout so far
 * is `output()`. When the test ends the host and every group named in `pidDir` are SIGKILLed (the
 * groups a test keeps alive too).
 */
const startHost = (mode: string, pidDir: string) =>
  Effect.gen(function*() {
    const host = spawn(process.execPath, [fixture, mode, pidDir], { stdio: ["ignore", "pipe", "inherit"] })
    yield* Effect.addFinalizer(() =>
      Effect.sync(() => {
        host.kill("SIGKILL")
        killAll(readPids(pidDir).map((pgid) => -pgid))
      })
    )
    let text = ""
    host.stdout.setEncoding("utf8").on("data", (chunk: string) => (text += chunk))
    const output = () => text
    expect(yield* eventually(output, (seen) => seen.includes("ready\n"), startupMs)).toContain("ready\n")
    return { host, output }
  })

describe("host death", () => {
  it.scopedLive("SIGKILL of the host kills every group it started and removes its spill directory", () =>
    Effect.gen(function*() {
      const spillParent = yield* scopedTempDir("spill")
      const pidDir = yield* scopedTempDir("pids")
      const host = spawn(process.execPath, [fixture, "doomed", spillParent, pidDir], {
        stdio: ["ignore", "pipe", "inherit"]
      })
      yield* killOnFailure(host, pidDir)
      let output = ""
      host.stdout.setEncoding("utf8").on("data", (chunk: string) => (output += chunk))
      expect(yield* eventually(() => output, (text) => text.includes("ready\n"), startupMs)).toContain("ready\n")
      const commandGroups = readPids(pidDir)
      expect(commandGroups).toHaveLength(3)
      // Every group the host started (the commands and whatever else it runs), each alive now.
      const groups = [...new Set([...commandGroups, ...childGroups(host.pid!)])]
      for (const pgid of commandGroups) expect(liveMembers(pgid).length).toBeGreaterThan(0)
      expect(fs.readdirSync(spillParent)).toHaveLength(1)

      host.kill("SIGKILL")
      yield* Effect.promise(() => once(host, "exit"))
      expect(yield* eventually(() => survivors(groups), (left) => left.length === 0)).toEqual([])
      expect(yield* eventually(() => fs.readdirSync(spillParent), (left) => left.length === 0)).toEqual([])
    }), { timeout: 40_000 })

  it.scopedLive("SIGKILL of a host with spawns always in flight: its long-running group, spawned by posix_spawn, dies", () =>
    Effect.gen(function*() {
      const pidDir = yield* scopedTempDir("pids")
      const { host, output } = yield* startHost("busy", pidDir)
      const [pgid] = readPids(pidDir)
      expect(output()).toContain("spawned by posix_spawn\n")
      expect(liveMembers(pgid!).length).toBeGreaterThan(0)

      host.kill("SIGKILL")
      yield* Effect.promise(() => once(host, "exit"))
      expect(yield* eventually(() => liveMembers(pgid!), (left) => left.length === 0)).toEqual([])
    }), { timeout: 40_000 })

  it.scopedLive("SIGKILL of a host whose reaper was stopped: the host resumes it first, and it kills the groups", () =>
    Effect.gen(function*() {
      const pidDir = yield* scopedTempDir("pids")
      const { host, output } = yield* startHost("reaper-stopped", pidDir)
      const [pgid] = readPids(pidDir)
      const [reaper] = reaperOf(host.pid!)
      expect(reaper).toBeDefined()
      yield* Effect.addFinalizer(() => Effect.sync(() => killAll([reaper!.pid])))
      expect(liveMembers(pgid!).length).toBeGreaterThan(0)

      process.kill(reaper!.pid, "SIGSTOP")
      expect(yield* eventually(output, (text) => text.includes("reaper resumed\n"))).toContain("reaper resumed\n")
      expect(stateOf(reaper!.pid)).not.toBe("T")

      host.kill("SIGKILL")
      yield* Effect.promise(() => once(host, "exit"))
      expect(yield* eventually(() => liveMembers(pgid!), (left) => left.length === 0)).toEqual([])
      expect(yield* eventually(() => isAlive(reaper!.pid), (alive) => !alive), "the reaper ends").toBe(false)
    }), { timeout: 40_000 })

  it.scopedLive("SIGHUP of `effect-bash run` ends it like SIGTERM: no survivors, no spill directory", () =>
    Effect.gen(function*() {
      const spillParent = yield* scopedTempDir("spill")
      const pidDir = yield* scopedTempDir("pids")
      const command = `echo $$ > ${pidDir}/run; sleep 100 & trap '' TERM; seq 1 5000; sleep 100`
      const { child, done } = startCli(
        ["run", "--spill-dir", spillParent, "--max-output-bytes", "100", "--grace-ms", "200", "--", command],
        { env: cleanEnv(), limitMs: 35_000 }
      )
      yield* killOnFailure(child, pidDir)
      const started = yield* eventually(
        () => fs.existsSync(path.join(pidDir, "run")) && fs.readdirSync(spillParent).length > 0,
        (ok) => ok,
        startupMs
      )
      expect(started).toBe(true)
      const [pgid] = readPids(pidDir)
      expect(liveMembers(pgid!).length).toBeGreaterThan(0)

      child.kill("SIGHUP")
      const outcome = yield* Effect.promise(() => done)
      // 128 + 1: the CLI interrupted itself and ran its finalizers, as it does for SIGTERM (143).
      expect({ code: outcome.code, signal: outcome.signal }).toEqual({ code: 129, signal: null })
      expect(liveMembers(pgid!)).toEqual([])
      expect(fs.readdirSync(spillParent)).toEqual([])
    }), { timeout: 40_000 })

  it.scopedLive("SIGHUP of `effect-bash mcp` shuts it down like SIGTERM: its command gets TERM, nothing survives", () =>
    Effect.gen(function*() {
      const workdir = yield* scopedTempDir("mcp")
      const transport = new StdioClientTransport({
        command: process.execPath,
        args: [cliPath, "mcp", "--workdir", workdir],
        env: cleanEnv({ EFFECT_BASH_GRACE_MS: "300" }),
        stderr: "ignore"
      })
      const client = new Client({ name: "host-death-test", version: "0.0.0" })
      yield* Effect.promise(() => client.connect(transport))
      yield* Effect.addFinalizer(() => Effect.tryPromise(() => client.close()).pipe(Effect.ignore))
      const server = transport.pid!
      // The shell notes a SIGTERM (which only an orderly shutdown sends first) and waits on a child.
      const command = `echo $$ > pid; trap 'echo TERM >> signals' TERM; sleep 100 & wait`
      yield* Effect.fork(
        Effect.tryPromise(() =>
          client.callTool({ name: "bash", arguments: { command, description: "wait for the host", timeoutMs: 60_000 } })
        ).pipe(Effect.ignore)
      )
      const pidFile = path.join(workdir, "pid")
      const pidText = () => (fs.existsSync(pidFile) ? fs.readFileSync(pidFile, "utf8") : "")
      expect(yield* eventually(pidText, (text) => text.endsWith("\n"), startupMs)).toMatch(/^\d+\n$/)
      const pgid = Number(fs.readFileSync(pidFile, "utf8"))
      expect(yield* eventually(() => liveMembers(pgid).length, (count) => count === 2)).toBe(2)
      const descendants = childGroups(server)

      process.kill(server, "SIGHUP")
      expect(yield* eventually(() => isAlive(server), (alive) => !alive)).toBe(false)
      expect(yield* eventually(() => survivors(descendants), (left) => left.length === 0)).toEqual([])
      expect(fs.readFileSync(path.join(workdir, "signals"), "utf8")).toBe("TERM\n")
    }), { timeout: 40_000 })
})

/** The reaper started by `pid`, if any (from /proc): pid, session and controlling terminal (0: none). */
const reaperOf = (pid: number) =>
  liveProcesses()
    .filter((row) => row.ppid === pid && isReaperCommandLine(commandLineOf(row.pid)))
    .map((row) => ({ pid: row.pid, sid: row.sid, tty: row.tty }))

/** Builds the executor in a scope of its own, logging into `logs`. */
const openExecutor = (logs: Array<string> = []) =>
  Effect.gen(function*() {
    const scope = yield* Scope.make()
    const logger = Logger.replace(Logger.defaultLogger, Logger.make(({ message }) => logs.push(String(message))))
    const context = yield* Layer.buildWithScope(LocalBashExecutor.layer(), scope).pipe(
      Effect.provide(logger)
    )
    return { bash: Context.get(context, BashExecutor), scope }
  })

describe("the host-death reaper", () => {
  it.live("runs in its own session with no terminal and only its pipe, and exits when the layer closes", () =>
    Effect.gen(function*() {
      const { bash, scope } = yield* openExecutor()
      const [reaper] = reaperOf(process.pid)
      expect(reaper).toBeDefined()
      expect(reaper!.sid).toBe(reaper!.pid)
      expect(reaper!.tty).toBe(0)
      const fds = fs.readdirSync(`/proc/${reaper!.pid}/fd`).sort()
      expect(fds).toEqual(["0", "1", "2"])
      expect([1, 2].map((fd) => fs.readlinkSync(`/proc/${reaper!.pid}/fd/${fd}`))).toEqual(["/dev/null", "/dev/null"])
      expect((yield* bash.run(yield* bash.resolve({ command: "echo hi" }))).stdout.text).toBe("hi\n")
      yield* Scope.close(scope, Exit.void)
      // The close awaits the reaper's goodbye for a bounded time only.
      expect(yield* eventually(() => reaperOf(process.pid), (left) => left.length === 0)).toEqual([])
    }))

  it.live("a reaper that dies is reported and the layer keeps working", () =>
    Effect.gen(function*() {
      const logs: Array<string> = []
      const { bash, scope } = yield* openExecutor(logs)
      const [reaper] = reaperOf(process.pid)
      process.kill(reaper!.pid, "SIGKILL")
      const reported = yield* eventually(
        () => logs.find((line) => line.includes("host-death reaper exited")),
        (line) => line !== undefined
      )
      expect(reported, "the reaper's exit is logged").toContain("SIGKILL")
      const result = yield* bash.run(yield* bash.resolve({ command: "echo still; sleep 0 & wait" }))
      expect(result.stdout.text).toBe("still\n")
      yield* Scope.close(scope, Exit.void)
    }))

  it.live("an executor over the fake spawner starts no reaper", () =>
    Effect.gen(function*() {
      const scope = yield* Scope.make()
      yield* Layer.buildWithScope(
        LocalBashExecutor.layerWith().pipe(
          Layer.provide(Layer.mergeAll(FakeProcessSpawner.layer(), NodeFileSystem.layer, NodePath.layer))
        ),
        scope
      )
      expect(reaperOf(process.pid)).toEqual([])
      yield* Scope.close(scope, Exit.void)
    }))

  it.scopedLive("a host whose program ends without closing the layer is not kept alive by the reaper", () =>
    Effect.gen(function*() {
      const script = [
        `import { Effect, Layer, Scope } from "effect"`,
        `const { LocalBashExecutor } = await import(${JSON.stringify(path.join(import.meta.dirname, "..", "..", "dist", "src", "index.js"))})`,
        `const scope = Effect.runSync(Scope.make())`,
        `await Effect.runPromise(Layer.buildWithScope(LocalBashExecutor.layer(), scope))`
      ].join("\n")
      const host = spawn(process.execPath, ["--input-type=module", "-e", script], {
        cwd: path.join(import.meta.dirname, "..", ".."),
        stdio: "ignore"
      })
      yield* Effect.addFinalizer(() => Effect.sync(() => host.kill("SIGKILL")))
      const exit = yield* Effect.promise(() => once(host, "exit")).pipe(Effect.timeout(20_000))
      expect(exit).toEqual([0, null])
    }), { timeout: 30_000 })
})

describe("stale spill directories", () => {
  it.scopedLive("a new layer removes the spill directories of dead hosts and never a live host's", () =>
    Effect.gen(function*() {
      const parent = yield* scopedTempDir("sweep")
      // A host that ran and is gone: its prefix names a pid that no longer exists (or was reused).
      const dead = spawn("true")
      yield* Effect.promise(() => once(dead, "exit"))
      const ours = ownedPrefix()
      expect(ours).toMatch(/^effect-bash-\d+-\d+-\d+-$/)
      const [namespace] = ours.split("-").slice(2)
      const deadDir = path.join(parent, `effect-bash-${namespace}-${dead.pid}-12345-AbC123`)
      // The live host: this test process itself; a directory kept on purpose; someone else's file.
      const liveDir = fs.mkdtempSync(path.join(parent, ours))
      const keptDir = fs.mkdtempSync(path.join(parent, "effect-bash-"))
      const otherNamespace = path.join(parent, `effect-bash-1${namespace}-${dead.pid}-12345-AbC123`)
      for (const dir of [deadDir, otherNamespace]) fs.mkdirSync(dir)
      fs.writeFileSync(path.join(deadDir, "stdout-x.log"), "left behind")

      yield* Effect.scoped(
        Effect.gen(function*() {
          const bash = yield* BashExecutor
          yield* bash.run(yield* bash.resolve({ command: "true" }))
          // The sweep runs beside the layer: wait (bounded) for it while the layer lives.
          yield* eventually(() => fs.existsSync(deadDir), (exists) => !exists)
        }).pipe(Effect.provide(LocalBashExecutor.layer({ spillParent: parent })))
      )
      expect(fs.readdirSync(parent).sort()).toEqual(
        [liveDir, keptDir, otherNamespace].map((dir) => path.basename(dir)).sort()
      )
    }))
})
