/**
 * The container executor against a real Docker Engine. What runs in a container is checked with the
 * docker CLI (`docker top`, `docker ps`), never with the code under test.
 */
import { afterAll, describe, expect, it } from "@effect/vitest"
import { once } from "node:events"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { Cause, Duration, Effect, Exit, Fiber, Layer, ManagedRuntime, Scope } from "effect"
import * as BashStack from "../../src/BashStack.js"
import * as DockerBashExecutor from "../../src/layers/DockerBashExecutor.js"
import * as LocalBashExecutor from "../../src/layers/LocalBashExecutor.js"
import { boxGoneText, lostText, oomText } from "../../src/layers/internal/container/ContainerSpawner.js"
import { BashExecutor } from "../../src/services/BashExecutor.js"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js"
import { execFileSync } from "node:child_process"
import { cleanEnv, cliPath, eventually } from "../support/cli.js"
import { commandsIn, processesIn, containerHost, containerHosts, containersWith, containerState, dockerUnavailable, holdingProxy, pauseContainer, removeContainer, restartContainer, stopContainer, testImage, unpauseContainer } from "../support/docker.js"
import { withHostEnv } from "../support/hostEnv.js"
import { openFds } from "../support/processes.js"
import { tempDirs } from "../support/tempDirs.js"

const graceMs = 1_000
const dockerSocket = "/var/run/docker.sock"
const tmp = fs.realpathSync(os.tmpdir())
const dirs = tempDirs("effect-bash-container")
const freshDir = dirs.fresh
// Without an engine the suite is skipped, and its `afterAll` with it: nothing is made then.
const workspace = dockerUnavailable === undefined ? freshDir("ws") : tmp

let sessions = 0
/** A session id nobody else uses: its container is found by its label. */
const freshSession = () => `container-test-${process.pid}-${++sessions}`
const boxOf = (session: string): string => {
  const [id] = containersWith({ "effect-bash.session": session })
  if (id === undefined) throw new Error(`no container for session ${session}`)
  return id
}

const container = (settings: Partial<DockerBashExecutor.Settings.Input> = {}) =>
  DockerBashExecutor.layer({ image: testImage, graceMs, cwd: workspace, ...settings })

// One layer for the tests that allow it: a container's start is the slow part.
const shared = ManagedRuntime.make(container())
const local = ManagedRuntime.make(LocalBashExecutor.layer({ graceMs, cwd: workspace }))
afterAll(async () => {
  await shared.dispose()
  await local.dispose()
  dirs.removeAll()
})

const runIn = (request: BashExecutor.Request) =>
  Effect.gen(function*() {
    const bash = yield* BashExecutor
    return yield* bash.run(yield* bash.resolve(request))
  })

const inSession = (session: string, request: BashExecutor.Request): BashExecutor.Request => ({
  ...request,
  dshEnv: { DSH_SESSION_ID: session }
})

/** Reads a background process's output until `text` has appeared (polled on the Clock, bounded). */
const awaitOutput = (process: BashExecutor.Process, text: string) =>
  Effect.gen(function*() {
    let seen = ""
    while (!seen.includes(text)) {
      seen += (yield* process.readOutput).delta
      if (!seen.includes(text)) yield* Effect.sleep(20)
    }
    return seen
  }).pipe(Effect.timeoutFail({ duration: 10_000, onTimeout: () => new Error(`no ${JSON.stringify(text)} within 10 s`) }))

/**
 * Starts `command` (which prints `up` first) in `session`, does `outside` to its container once `up`
 * shows, and returns that container, how the command ended and what it printed after.
 */
const outsideWhileRunning = (session: string, command: string, outside: (box: string) => void) =>
  Effect.gen(function*() {
    const bash = yield* BashExecutor
    const process = yield* bash.start(yield* bash.resolve(inSession(session, { command })))
    yield* awaitOutput(process, "up")
    const box = boxOf(session)
    outside(box)
    const state = yield* process.done
    return { box, state, after: (yield* process.readOutput).delta }
  })

/** This process's open sockets, as `<fd> socket:[inode]`. */
const openSockets = () => openFds().filter((fd) => fd.includes(" socket:"))

/**
 * A layer of its own whose engine is reached through a {@link holdingProxy} holding back its answer to
 * the first request matching `held`; the layer lives in `scope`, which the test closes.
 */
const layerHeldAt = (held: RegExp, options?: { readonly armed?: boolean; readonly passUpgrade?: boolean }) =>
  Effect.gen(function*() {
    const proxy = yield* Effect.acquireRelease(
      Effect.promise(() => holdingProxy(freshDir("proxy"), held, options)),
      (proxy) => Effect.sync(proxy.close)
    )
    const scope = yield* Scope.make()
    const context = yield* Layer.buildWithScope(container({ dockerHost: proxy.address }), scope)
    return { proxy, scope, context }
  })

/** What the model sees of a result, spill paths aside (their contents are compared instead). */
const visible = (result: BashExecutor.RunResult) => ({
  exitCode: result.exitCode,
  signal: result.signal,
  timedOut: result.timedOut,
  stdout: result.stdout.text,
  stdoutTruncated: result.stdout.truncated,
  stdoutSpilled: result.stdout.spillPath === undefined ? undefined : fs.readFileSync(result.stdout.spillPath, "utf8"),
  stderr: result.stderr.text
})

describe.skipIf(dockerUnavailable !== undefined)("DockerBashExecutor on a real engine", () => {
  it.live("gives the local executor's results for the same commands", () =>
    Effect.gen(function*() {
      fs.writeFileSync(path.join(workspace, "data.txt"), "from the host\n")
      fs.mkdirSync(path.join(workspace, "sub"), { recursive: true })
      const bashEnvFile = path.join(workspace, "bash-env.sh")
      fs.writeFileSync(bashEnvFile, "echo setup-loaded\n")
      const requests: ReadonlyArray<BashExecutor.Request> = [
        { command: "echo out; echo err >&2; exit 3" },
        { command: "printf 'no newline'" },
        { command: "kill -TERM $$" },
        { command: "kill -KILL $$" },
        { command: "exit 137" },
        { command: "cat data.txt; pwd" },
        { command: "pwd", workdir: path.join(workspace, "sub") },
        { command: "cat; echo \"[$0]\"", stdin: "piped in\n" },
        { command: "--version" },
        { command: "echo \"$GREETING $DSH_X\"", env: { GREETING: "hello" }, dshEnv: { DSH_X: "managed" } },
        { command: "seq 1 30000", stdoutMaxBytes: 1_000 },
        // Long enough that `start` is printed before the timeout on a loaded machine, in a container and here.
        { command: "echo start; sleep 30", timeoutMs: 1_000 },
        { command: "sleep 30 & echo left behind" },
        // What bash reads as it starts reaches the command's shell, never the wrapper's.
        { command: "echo hi; exit 3", env: { SHELLOPTS: "errexit" } },
        { command: "echo \"$-\"; echo \"${UNSET_HERE-default}\"", env: { SHELLOPTS: "nounset:errexit" } },
        { command: "shopt -q nullglob && echo nullglob on", env: { BASHOPTS: "nullglob" } },
        { command: "echo hello", env: { BASH_ENV: bashEnvFile } },
        { command: "echo ran", env: { SHELLOPTS: "xtrace" } },
        { command: "echo \"$GLOBIGNORE\"; sleep 1 & true", env: { GLOBIGNORE: "/proc/*" } },
        // A command's own handlers of the terminal's stop signals run; a stop that is continued is no end.
        { command: "trap 'echo got-TSTP' TSTP; kill -TSTP $$; echo after" },
        { command: "(sleep 0.3; kill -CONT $$) & kill -TSTP $$; echo after; wait; exit 3" },
        // A leader that stops itself has not ended: the timeout kills it.
        { command: "echo before; kill -STOP $$; echo after", timeoutMs: 1_000 },
        { command: `echo ${"x".repeat(70 * 1024)} | wc -c` }
      ]
      for (const request of requests) {
        const there = yield* Effect.provide(runIn(request), shared)
        const here = yield* Effect.provide(runIn(request), local)
        expect(visible(there), request.command.slice(0, 60)).toEqual(visible(here))
      }
    }), 60_000)

  it.live("megabytes of stdin for a command that writes while it reads: its output is read meanwhile", () =>
    Effect.gen(function*() {
      const result = yield* Effect.provide(runIn({ command: "tr x y", stdin: "x".repeat(8 * 1024 * 1024), timeoutMs: 30_000 }), shared)
      expect(result).toMatchObject({ exitCode: 0, timedOut: false, stdout: { truncated: true } })
      expect(fs.statSync(result.stdout.spillPath!).size).toBe(8 * 1024 * 1024)
    }).pipe(Effect.timeoutFail({ duration: 40_000, onTimeout: () => new Error("the call did not return within 40 s") })))

  it.live("a workdir that does not exist in the container fails the spawn as it does locally", () =>
    Effect.gen(function*() {
      const there = yield* Effect.provide(Effect.flip(runIn({ command: "true", workdir: "/no/such/dir" })), shared)
      const here = yield* Effect.provide(Effect.flip(runIn({ command: "true", workdir: "/no/such/dir" })), local)
      expect(there).toMatchObject({ _tag: "SpawnError", code: "ENOENT", message: (here as { message: string }).message })
    }))

  it.live("a call's exported functions, names of the wrapper's own and names no environment has are refused, naming the variable", () =>
    Effect.gen(function*() {
      for (const name of ["BASH_FUNC_exec%%", "__effect_bash_saved_PATH", "", "A=B"]) {
        const refused = yield* Effect.provide(Effect.flip(runIn({ command: "echo ran", env: { [name]: "() { echo hijacked; }" } })), shared)
        expect(refused).toMatchObject({ _tag: "SpawnError", code: "EINVAL" })
        expect(refused.message).toMatch(new RegExp(`^env: (${name}|${JSON.stringify(name)}): `))
      }
    }))

  it.live("a PATH without bash on it fails the start, naming that PATH", () =>
    Effect.gen(function*() {
      const refused = yield* Effect.provide(Effect.flip(runIn({ command: "echo ran", env: { PATH: "/nonexistent" } })), shared)
      expect(refused).toMatchObject({ _tag: "SpawnError" })
      expect(refused.message).toContain("(the image needs bash on PATH=/nonexistent)")
    }))

  it.live("a session's first workdir missing on the host fails as it does locally, and the engine creates nothing", () =>
    Effect.gen(function*() {
      const missing = path.join(workspace, `missing-${process.pid}`, "deeper")
      const request = { command: "true", workdir: missing }
      const there = yield* Effect.provide(Effect.flip(runIn(inSession(freshSession(), request))), shared)
      const here = yield* Effect.provide(Effect.flip(runIn(request)), local)
      expect(there).toMatchObject({ _tag: "SpawnError", code: "ENOENT", message: (here as { message: string }).message })
      expect(fs.existsSync(path.dirname(missing))).toBe(false)
    }))

  it.live("a timeout kills the command's whole group inside the container", () =>
    Effect.gen(function*() {
      const session = freshSession()
      const result = yield* Effect.provide(
        runIn(inSession(session, { command: "sleep 1001 & sleep 1002 & (sleep 1003; true) & wait", timeoutMs: 500 })),
        shared
      )
      expect(result).toMatchObject({ timedOut: true, signal: "SIGTERM" })
      expect(commandsIn(boxOf(session))).toEqual([])
    }))

  it.live("a command that ignores SIGTERM dies by SIGKILL after the grace", () =>
    Effect.gen(function*() {
      const session = freshSession()
      const started = Date.now()
      // Long enough for bash to set its trap before the timeout on a loaded machine.
      const timeoutMs = 1_000
      const result = yield* Effect.provide(
        runIn(inSession(session, { command: "trap '' TERM; sleep 1004 & trap '' TERM; wait", timeoutMs })),
        shared
      )
      expect(result).toMatchObject({ timedOut: true, signal: "SIGKILL" })
      expect(Date.now() - started).toBeGreaterThanOrEqual(timeoutMs + graceMs)
      expect(commandsIn(boxOf(session))).toEqual([])
    }))

  it.live("a background command is read while it runs and killed with its group", () =>
    Effect.gen(function*() {
      const session = freshSession()
      const started = yield* Effect.provide(
        Effect.gen(function*() {
          const bash = yield* BashExecutor
          const process = yield* bash.start(
            yield* bash.resolve(inSession(session, { command: "sleep 1005 & echo ready; sleep 1006", owner: session }))
          )
          yield* awaitOutput(process, "ready")
          // The `&` child may not have become `sleep` yet.
          const running = () => commandsIn(boxOf(session)).some((args) => args.includes("sleep 1005"))
          expect(yield* Effect.promise(() => eventually(running, 10_000))).toBe(true)
          expect(yield* process.kill).toBe(true)
          return yield* process.done
        }),
        shared
      )
      expect(started).toMatchObject({ status: "killed" })
      expect(commandsIn(boxOf(session))).toEqual([])
    }))

  it.live("two sessions run in two containers that share the mounted directory, not each other's processes", () =>
    Effect.gen(function*() {
      const [a, b] = [freshSession(), freshSession()]
      const [dirA, dirB] = [fs.mkdtempSync(path.join(workspace, "a-")), fs.mkdtempSync(path.join(workspace, "b-"))]
      fs.writeFileSync(path.join(dirA, "secret"), "a's\n")
      const background = yield* Effect.provide(
        Effect.gen(function*() {
          const bash = yield* BashExecutor
          return yield* bash.start(yield* bash.resolve(inSession(a, { command: "sleep 1007", workdir: dirA })))
        }),
        shared
      )
      const fromB = yield* Effect.provide(
        runIn(inSession(b, { command: `ls ${dirA}/secret; ps -eo args | grep -c '^sleep 1007$'`, workdir: dirB })),
        shared
      )
      expect(fromB.stderr.text).toBe("")
      expect(fromB.stdout.text).toBe(`${dirA}/secret\n0\n`)
      expect(boxOf(a)).not.toBe(boxOf(b))
      yield* Effect.provide(background.kill, shared)
    }))

  it.live("a session's first workdir outside the mounted directory, or a link out of it, shows nothing of the host's there", () =>
    Effect.gen(function*() {
      const outside = freshDir("outside")
      fs.writeFileSync(path.join(outside, "host-file"), "host\n")
      const link = path.join(fs.mkdtempSync(path.join(workspace, "links-")), "out")
      fs.symlinkSync(outside, link)
      for (const workdir of [outside, link]) {
        const session = freshSession()
        const listed = yield* Effect.provide(
          Effect.either(runIn(inSession(session, { command: "ls", workdir }))),
          shared
        )
        expect(listed._tag === "Right" ? listed.right.stdout.text : "").not.toContain("host-file")
        // The session's container has the mounted directory, and the host's files there.
        const inside = yield* Effect.provide(runIn(inSession(session, { command: "ls", workdir: path.dirname(link) })), shared)
        expect(inside.stdout.text).toBe("out\n")
      }
    }))

  it.live("a layer whose containers would mount the host's root directory is refused, naming the setting", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(Layer.build(container({ cwd: "/" })).pipe(Effect.scoped))
      expect(error).toMatchObject({ _tag: "LocalBashExecutorConfigError", field: "cwd" })
      expect(error.message).toContain("every container would mount the host's whole file system")
      const root = yield* Effect.flip(Layer.build(container({ workspaceRoot: "/" })).pipe(Effect.scoped))
      expect(root).toMatchObject({ field: "workspaceRoot" })
    }))

  it.live("the network is none by default: only the loopback interface", () =>
    Effect.gen(function*() {
      const result = yield* Effect.provide(runIn({ command: "ls /sys/class/net" }), shared)
      expect(result.stdout.text).toBe("lo\n")
    }))

  it.live("the host's environment never reaches the container", () =>
    Effect.gen(function*() {
      const result = yield* Effect.provide(runIn({ command: "env" }), shared).pipe(
        withHostEnv({ EFFECT_BASH_CONTAINER_TEST_HOST_ONLY: "host value" })
      )
      expect(result.stdout.text).not.toContain("EFFECT_BASH_CONTAINER_TEST_HOST_ONLY")
      expect(result.stdout.text).toContain("NO_COLOR=1")
    }))

  it.live("a container removed from outside fails its call clearly; the next call gets a new one", () =>
    Effect.gen(function*() {
      const session = freshSession()
      const removed = yield* Effect.provide(outsideWhileRunning(session, "echo up; sleep 1008", removeContainer), shared)
      expect(removed.state).toMatchObject({ exitCode: null, signal: "SIGKILL" })
      expect(removed.after).toContain(boxGoneText(removed.box))
      const next = yield* Effect.provide(runIn(inSession(session, { command: "echo again" })), shared)
      expect(next.stdout.text).toBe("again\n")
      expect(boxOf(session)).not.toBe(removed.box)
    }))

  it.live("a call whose supervisor is killed, its container restarted or by the command, ends killed and says so; nothing of it runs on", () =>
    Effect.gen(function*() {
      const session = freshSession()
      const restarted = yield* Effect.provide(outsideWhileRunning(session, "echo up; sleep 1016", restartContainer), shared)
      expect(restarted.state).toMatchObject({ exitCode: null, signal: "SIGKILL" })
      expect(restarted.after).toContain(lostText)
      const killedItsOwn = yield* Effect.provide(
        runIn(inSession(session, { command: "echo up; kill -9 $PPID; sleep 1017", timeoutMs: 60_000 })),
        shared
      )
      expect(visible(killedItsOwn)).toMatchObject({ exitCode: null, signal: "SIGKILL", stdout: "up\n", stderr: lostText })
      const box = boxOf(session)
      const left = () => commandsIn(box).filter((args) => /sleep 101[67]/.test(args))
      yield* Effect.promise(() => eventually(() => left().length === 0, 10_000))
      expect(left()).toEqual([])
    }))

  it.live("calls one after another are served by one wrapper kept in the box; one killed while it waits is replaced, and the call runs once", () =>
    Effect.gen(function*() {
      const session = freshSession()
      const served = () => processesIn(boxOf(session)).filter((args) => args.endsWith("effect-bash serve"))
      const counter = path.join(workspace, `runs-${session}`)
      // Each command's parent is the wrapper that ran it: one for all three.
      const parents = new Set<string>()
      for (const code of [0, 3, 0]) {
        const result = yield* Effect.provide(runIn(inSession(session, { command: `echo "$PPID"; exit ${code}` })), shared)
        expect(result.exitCode).toBe(code)
        parents.add(result.stdout.text)
      }
      expect(parents.size).toBe(1)
      expect(served()).toHaveLength(1)
      // What a process of the box could do to it: the waiting wrapper dies.
      execFileSync("docker", ["exec", "-u", "0", boxOf(session), "bash", "-c",
        "for p in /proc/[0-9]*; do mapfile -d '' -t a <$p/cmdline; [ \"${a[6]-}\" = serve ] && [ ${#a[@]} = 7 ] && kill -9 ${p#/proc/}; done; true"])
      expect(yield* Effect.promise(() => eventually(() => served().length === 0, 10_000))).toBe(true)
      const result = yield* Effect.provide(runIn(inSession(session, { command: `echo run >>${counter}; echo ok` })), shared)
      expect({ exitCode: result.exitCode, stdout: result.stdout.text }).toEqual({ exitCode: 0, stdout: "ok\n" })
      expect(fs.readFileSync(counter, "utf8")).toBe("run\n")
      expect(served()).toHaveLength(1)
    }))

  it.live("a process that left its call's group holding the output: the call ends with its shell, and its wrapper serves no more", () =>
    Effect.gen(function*() {
      const session = freshSession()
      const served = () => processesIn(boxOf(session)).filter((args) => args.endsWith("effect-bash serve"))
      // On the host too the call ends with the shell, its output drained within the grace.
      const inBox = yield* Effect.provide(runIn(inSession(session, { command: "(set -m; sleep 1015 &); echo left" })), shared)
      expect(visible(inBox)).toMatchObject({ exitCode: 0, signal: null, timedOut: false, stdout: "left\n", stderr: "" })
      // The escaped sleep still runs (as it would on the host), holding the wrapper's output: that
      // wrapper has gone, and the next call gets a new one.
      expect(commandsIn(boxOf(session)).filter((args) => args.includes("sleep 1015"))).toHaveLength(1)
      expect(yield* Effect.promise(() => eventually(() => served().length === 0, 10_000))).toBe(true)
      const next = yield* Effect.provide(runIn(inSession(session, { command: "echo next" })), shared)
      expect(visible(next)).toMatchObject({ exitCode: 0, stdout: "next\n" })
    }))

  it.live("a container stopped or removed from outside between calls: the session's next call runs in a new one", () =>
    Effect.gen(function*() {
      const session = freshSession()
      for (const outside of [stopContainer, removeContainer]) {
        yield* Effect.provide(runIn(inSession(session, { command: "true" })), shared)
        const before = boxOf(session)
        outside(before)
        const next = yield* Effect.provide(runIn(inSession(session, { command: "echo again" })), shared)
        expect({ outside: outside.name, stdout: next.stdout.text }).toEqual({ outside: outside.name, stdout: "again\n" })
        expect(boxOf(session)).not.toBe(before)
      }
    }))

  it.live("a container paused from outside is not gone: a call meanwhile fails saying so, and the one running in it goes on once unpaused", () =>
    Effect.gen(function*() {
      const session = freshSession()
      const started = path.join(workspace, `started-${session}`)
      // Two served wrappers wait in the box: the call while it is paused takes one of them.
      yield* Effect.all([0, 1].map(() => Effect.provide(runIn(inSession(session, { command: "sleep 0.2" })), shared)), { concurrency: 2 })
      const running = yield* Effect.fork(Effect.provide(
        runIn(inSession(session, { command: `touch ${started}; sleep 1; echo done`, timeoutMs: 60_000 })),
        shared
      ))
      // A bound for a loaded machine: the command starting is what is awaited, not how fast.
      expect(yield* Effect.promise(() => eventually(() => fs.existsSync(started), 30_000))).toBe(true)
      const box = boxOf(session)
      pauseContainer(box)
      const refused = yield* Effect.flip(Effect.provide(runIn(inSession(session, { command: "true" })), shared))
      unpauseContainer(box)
      expect(refused.message).toContain("is paused")
      const result = yield* Fiber.join(running)
      expect({ stdout: result.stdout.text, exitCode: result.exitCode }).toEqual({ stdout: "done\n", exitCode: 0 })
      expect(boxOf(session)).toBe(box)
    }))

  it.live("a container paused from outside while its call runs: the timeout, unable to signal it, removes the container", () =>
    Effect.gen(function*() {
      const session = freshSession()
      const started = path.join(workspace, `started-${session}`)
      const call = yield* Effect.fork(Effect.provide(
        runIn(inSession(session, { command: `touch ${started}; sleep 1014`, timeoutMs: 3_000 })),
        shared
      ))
      // A bound for a loaded machine: the command starting is what is awaited, not how fast.
      expect(yield* Effect.promise(() => eventually(() => fs.existsSync(started), 30_000))).toBe(true)
      pauseContainer(boxOf(session))
      const result = yield* Fiber.join(call)
      expect(result).toMatchObject({ exitCode: null, signal: "SIGKILL", timedOut: true })
      expect(containersWith({ "effect-bash.session": session })).toEqual([])
    }))

  it.live("the memory limit kills a command, not the wrapper that reports it, and the result says so; the CPU limit is the container's", () =>
    Effect.gen(function*() {
      const [result, scores, quota] = yield* Effect.provide(
        Effect.all([
          runIn({ command: "x=$(head -c 300000000 /dev/zero | tr '\\0' a); echo survived" }),
          // The command's shell, then its parent, the wrapper.
          runIn({ command: "cat /proc/$$/oom_score_adj /proc/$PPID/oom_score_adj" }),
          // cgroup v2, else v1: the quota and the period in microseconds.
          runIn({
            command:
              "cat /sys/fs/cgroup/cpu.max 2>/dev/null || echo \"$(cat /sys/fs/cgroup/cpu/cpu.cfs_quota_us) $(cat /sys/fs/cgroup/cpu/cpu.cfs_period_us)\""
          })
        ]),
        container({ memoryMb: 32, cpus: 0.5 })
      )
      expect(result).toMatchObject({ signal: "SIGKILL" })
      expect(result.stderr.text).toContain(oomText(32))
      const [command, wrapper] = scores.stdout.text.trim().split("\n").map(Number)
      expect(command).toBe(1000)
      expect(wrapper).toBeLessThan(1000)
      expect(quota.stdout.text).toBe("50000 100000\n")
    }))

  it.live("the pids limit bites", () =>
    Effect.gen(function*() {
      const result = yield* Effect.provide(
        runIn({ command: "for i in $(seq 1 40); do sleep 1 & done; wait", timeoutMs: 20_000 }),
        container({ pidsLimit: 16 })
      )
      expect(result.stderr.text).toContain("Resource temporarily unavailable")
    }))

  it.live("a fork bomb left at the pids limit, where no kill can start, is ended with its container; the next call gets a new one", () =>
    Effect.gen(function*() {
      const session = freshSession()
      const { bomb, first, next } = yield* Effect.provide(
        Effect.gen(function*() {
          const bomb = yield* runIn(inSession(session, { command: "f(){ f|f& }; f" }))
          const first = containersWith({ "effect-bash.session": session })
          const next = yield* runIn(inSession(session, { command: "echo after" }))
          return { bomb, first, next }
        }),
        container({ pidsLimit: 40 })
      )
      expect(bomb.timedOut).toBe(false)
      // Its leader returned at once; the leftovers are killed, with their container when it is full.
      expect(first.length).toBeLessThanOrEqual(1)
      expect(next.stdout.text).toBe("after\n")
    }), { timeout: 90_000 })

  it.live("a pending idle stop neither delays the session's next call nor the layer's close", () =>
    Effect.gen(function*() {
      const session = freshSession()
      const scope = yield* Scope.make()
      const context = yield* Layer.buildWithScope(container({ idleStopMs: 60_000 }), scope)
      const call = (command: string) => Effect.provide(runIn(inSession(session, { command })), context)
      yield* call("true")
      // The idle stop is pending now: the next call takes it back, the close cancels it.
      const [nextMs, next] = yield* Effect.timed(call("echo again"))
      expect(next.stdout.text).toBe("again\n")
      const [closeMs] = yield* Effect.timed(Scope.close(scope, Exit.void))
      expect(Duration.toMillis(nextMs)).toBeLessThan(30_000)
      expect(Duration.toMillis(closeMs)).toBeLessThan(30_000)
      expect(containersWith({ "effect-bash.session": session })).toEqual([])
    }), { timeout: 150_000 })

  it.live("a container removed from outside while idle-stopped is replaced by the session's next call", () =>
    Effect.gen(function*() {
      const session = freshSession()
      const context = yield* Layer.build(container({ idleStopMs: 100 }))
      const call = (command: string) => Effect.provide(runIn(inSession(session, { command })), context)
      yield* call("true")
      const first = boxOf(session)
      const deadline = Date.now() + 20_000
      while (containerState(first) !== "exited" && Date.now() < deadline) yield* Effect.sleep(50)
      expect(containerState(first)).toBe("exited")
      removeContainer(first)
      expect((yield* call("echo again")).stdout.text).toBe("again\n")
      expect(boxOf(session)).not.toBe(first)
    }).pipe(Effect.scoped), { timeout: 60_000 })

  it.live("a container whose create was interrupted is removed when the layer closes", () =>
    Effect.gen(function*() {
      const { proxy, scope, context } = yield* layerHeldAt(/^POST \S*\/containers\/create/)
      const session = freshSession()
      const call = yield* Effect.fork(Effect.provide(runIn(inSession(session, { command: "true" })), context))
      // The engine made the container; its id never reaches the executor.
      yield* Effect.promise(() => proxy.reached)
      expect(containersWith({ "effect-bash.session": session })).toHaveLength(1)
      yield* Fiber.interrupt(call)
      yield* Scope.close(scope, Exit.void)
      expect(containersWith({ "effect-bash.session": session })).toEqual([])
    }).pipe(Effect.scoped))

  it.live("a call of its own exec interrupted while its exec starts, its pid not yet read, runs nothing", () =>
    Effect.gen(function*() {
      const { proxy, scope, context } = yield* layerHeldAt(/^POST \S*\/exec\/\S+\/start/, { armed: false, passUpgrade: true })
      const session = freshSession()
      const started = path.join(workspace, `started-${session}`)
      // The box first (its making runs an exec too), then the call whose exec start is held.
      yield* Effect.provide(runIn(inSession(session, { command: "true" })), context)
      proxy.arm()
      const call = yield* Effect.fork(
        // With input: an exec of its own, whose start the proxy holds (a served call starts no exec).
        Effect.provide(runIn(inSession(session, { command: `touch ${started}; sleep 1013`, timeoutMs: 60_000, stdin: "" })), context)
      )
      // The engine started the exec and the host sent the call; the wrapper's pid line is held.
      yield* Effect.promise(() => proxy.reached)
      expect(Exit.isInterrupted(yield* Fiber.interrupt(call))).toBe(true)
      // The exec is closed: its leader reads the end of its input instead of `go`, and it and its
      // wrapper exit without running the command.
      const box = boxOf(session)
      const wrappers = () => commandsIn(box).filter((args) => /effect-bash once$/.test(args))
      yield* Effect.promise(() => eventually(() => wrappers().length === 0, 30_000))
      expect(wrappers()).toEqual([])
      expect(commandsIn(box).filter((args) => args.includes("sleep 1013"))).toEqual([])
      expect(fs.existsSync(started)).toBe(false)
      yield* Scope.close(scope, Exit.void)
    }).pipe(Effect.scoped))

  it.live("a call aborted while its container starts runs nothing there, and fails as aborted before spawn", () =>
    Effect.gen(function*() {
      const { proxy, scope, context } = yield* layerHeldAt(/^POST \S*\/containers\/\S+\/start/)
      const session = freshSession()
      const started = path.join(workspace, `started-${session}`)
      const abort = new AbortController()
      const call = yield* Effect.fork(
        Effect.provide(runIn({ ...inSession(session, { command: `touch ${started}` }), signal: abort.signal }), context)
      )
      // The engine has started the session's container; its answer waits until the call is aborted.
      yield* Effect.promise(() => proxy.reached)
      abort.abort(new Error("the user pressed Esc"))
      proxy.release()
      const exit = yield* Fiber.await(call)
      expect(Exit.isFailure(exit) && Cause.squash(exit.cause)).toMatchObject({
        _tag: "AbortedBeforeSpawnError",
        message: "aborted before spawn: the user pressed Esc"
      })
      expect(fs.existsSync(started)).toBe(false)
      yield* Scope.close(scope, Exit.void)
    }).pipe(Effect.scoped))

  it.live("a command cannot make a device node, in the mounted workspace or anywhere", () =>
    Effect.gen(function*() {
      const session = freshSession()
      // The image has no mknod: the host's, in the mounted directory.
      const mknod = `mknod-${session}`
      fs.copyFileSync("/usr/bin/mknod", path.join(workspace, mknod))
      fs.chmodSync(path.join(workspace, mknod), 0o755)
      const result = yield* Effect.provide(
        runIn(inSession(session, { command: `./${mknod} ./null c 1 3 || ./${mknod} /tmp/null c 1 3` })),
        shared
      )
      expect(result.exitCode).toBe(1)
      expect(result.stderr.text).toContain("Operation not permitted")
    }))

  it.live("closing a layer removes its own containers, not another layer's of the same process", () =>
    Effect.gen(function*() {
      const [a, b] = [freshSession(), freshSession()]
      const scope = yield* Scope.make()
      const other = yield* Layer.buildWithScope(container(), scope)
      yield* Effect.provide(runIn(inSession(a, { command: "true" })), other)
      yield* Effect.provide(runIn(inSession(b, { command: "true" })), shared)
      const kept = boxOf(b)
      yield* Scope.close(scope, Exit.void)
      expect(containersWith({ "effect-bash.session": a })).toEqual([])
      expect(containersWith({ "effect-bash.session": b })).toEqual([kept])
    }))

  it.live("no container and no connection to the engine is left once the layer has closed", () =>
    Effect.gen(function*() {
      const session = freshSession()
      const before = new Set(openSockets())
      const scope = yield* Scope.make()
      const context = yield* Layer.buildWithScope(container(), scope)
      yield* Effect.provide(runIn(inSession(session, { command: "sleep 1009 & true" })), context)
      expect(containersWith({ "effect-bash.session": session })).toHaveLength(1)
      yield* Scope.close(scope, Exit.void)
      expect(containersWith({ "effect-bash.session": session })).toEqual([])
      expect(openSockets().filter((socket) => !before.has(socket))).toEqual([])
    }))

  it.live.skipIf(!fs.existsSync(dockerSocket))("an explicit socket address wins over a DOCKER_HOST naming another engine", () =>
    Effect.gen(function*() {
      const result = yield* Effect.provide(
        runIn({ command: "echo reached" }),
        container({ dockerHost: `unix://${dockerSocket}` })
      ).pipe(withHostEnv({ DOCKER_HOST: "tcp://127.0.0.1:9" }))
      expect(result.stdout.text).toBe("reached\n")
    }))

  it.live("without an address, a user's Docker Desktop socket is the engine dialed and the one a failure names", () =>
    Effect.gen(function*() {
      // A socket file nothing listens on: dialing it is refused, where the system's socket would answer.
      const home = freshDir("home")
      const socket = path.join(home, ".docker", "run", "docker.sock")
      fs.mkdirSync(path.dirname(socket), { recursive: true })
      fs.writeFileSync(socket, "")
      for (const dockerHost of [undefined, "unix://"]) {
        const refused = yield* Effect.flip(Layer.build(container()).pipe(Effect.scoped)).pipe(
          withHostEnv({ DOCKER_HOST: dockerHost, HOME: home })
        )
        expect(refused.message).toBe(
          `cannot reach the Docker Engine at unix://${socket} (ECONNREFUSED): is dockerd running? Set DOCKER_HOST or dockerHost to its address`
        )
      }
    }))

  it.live("an unreachable engine, a missing image and limits the engine refuses fail the layer, naming what is wrong", () =>
    Effect.gen(function*() {
      const unreachable = yield* Effect.flip(
        Layer.build(container({ dockerHost: "unix:///nonexistent/docker.sock" })).pipe(Effect.scoped)
      )
      expect(unreachable.message).toContain("unix:///nonexistent/docker.sock")
      // Limits the engine would refuse at every container's create: refused by the layer, naming the field.
      const tooManyCpus = yield* Effect.flip(Layer.build(container({ cpus: 1000 })).pipe(Effect.scoped))
      expect(tooManyCpus).toMatchObject({ _tag: "LocalBashExecutorConfigError", field: "cpus" })
      expect(tooManyCpus.message).toMatch(/^bash-container: cpus is 1000, more than the \d+ CPUs of the Docker Engine at unix:\/\//)
      const tooLittleMemory = yield* Effect.flip(Layer.build(container({ memoryMb: 2 })).pipe(Effect.scoped))
      expect(tooLittleMemory).toMatchObject({ _tag: "LocalBashExecutorConfigError", field: "memoryMb" })
      const missing = yield* Effect.flip(Layer.build(container({ image: "effect-bash-no-such-image:1" })).pipe(Effect.scoped))
      expect(missing.message).toContain("\"effect-bash-no-such-image:1\"")
      expect(missing.message).toContain("docker pull effect-bash-no-such-image:1")
    }))

  it.live("the containers of a host killed by SIGKILL are removed when the next layer starts", () =>
    Effect.gen(function*() {
      const session = freshSession()
      const { host, ready } = containerHost({ image: testImage, cwd: workspace }, session)
      yield* Effect.promise(() => ready).pipe(Effect.timeout(30_000))
      host.kill("SIGKILL")
      yield* Effect.promise(() => once(host, "exit"))
      expect(containersWith({ "effect-bash.session": session })).toHaveLength(1)
      yield* Effect.scoped(Layer.build(container()))
      expect(containersWith({ "effect-bash.session": session })).toEqual([])
    }), 60_000)

  it.live("effect-bash mcp --container-image serves commands that run in a container, removed when the client closes", () =>
    Effect.gen(function*() {
      const transport = new StdioClientTransport({
        command: process.execPath,
        args: [cliPath, "mcp", "--workdir", workspace, "--container-image", testImage, "--container-pids-limit", "64"],
        env: cleanEnv(),
        stderr: "pipe"
      })
      const client = new Client({ name: "container-mcp-test", version: "0.0.0" })
      yield* Effect.promise(() => client.connect(transport))
      const serverPid = transport.pid
      const result = yield* Effect.promise(() =>
        client.callTool({
          name: "bash",
          arguments: { command: "ls /sys/class/net; cat /sys/fs/cgroup/pids.max /sys/fs/cgroup/pids/pids.max 2>/dev/null; true", description: "where am I" }
        })
      )
      const ours = () => containerHosts().filter((host) => host.includes(`-${serverPid}-`))
      expect(ours()).toHaveLength(1)
      yield* Effect.promise(() => client.close())
      expect((result.content as Array<{ text: string }>).map((part) => part.text).join("")).toBe("lo\n64\n")
      expect(ours()).toEqual([])
    }), 30_000)

  it.live("BashStack with container runs its commands in a container, and refuses container with sandbox", () =>
    Effect.gen(function*() {
      const result = yield* Effect.provide(
        runIn({ command: "cat /proc/1/cmdline | tr '\\0' ' '" }),
        BashStack.layer({ executor: { cwd: workspace }, container: { image: testImage } })
      )
      expect(result.stdout.text).toBe("/sbin/docker-init -- sleep infinity ")
      const both = yield* Effect.flip(
        Layer.build(BashStack.layer({ container: { image: testImage }, sandbox: { sandboxMode: "read-only" } })).pipe(Effect.scoped)
      )
      expect(both).toMatchObject({ _tag: "LocalBashExecutorConfigError", field: "container" })
    }))
})
