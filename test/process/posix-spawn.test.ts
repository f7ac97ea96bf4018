/**
 * The host's `posix_spawn` with real processes: commands are the host's own children, with none of
 * its descriptors; their bytes arrive whole; their exits, and the spawns that fail, read as
 * `child_process` reports them; a running command keeps the host alive, and only while it runs; its
 * `SIGCHLD` listener ends with the layer; and where it cannot serve (no koffi, a worker thread)
 * `child_process` spawns.
 */
import { describe, expect, it } from "@effect/vitest"
import { Context, Deferred, Effect, Exit, Fiber, Layer, Scope } from "effect"
import { createHash } from "node:crypto"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import * as LocalBashExecutor from "../../src/layers/LocalBashExecutor.js"
import * as NodeProcessSpawner from "../../src/layers/NodeProcessSpawner.js"
import { startHelpersAfter } from "../../src/layers/startHelpersAfter.js"
import { BashExecutor } from "../../src/services/BashExecutor.js"
import { ProcessSpawner } from "../../src/services/ProcessSpawner.js"
import { cleanEnv, eventually, runNode } from "../support/cli.js"
import { childrenOf, commandLineOf, firstPid, isReaperCommandLine, listFds } from "../support/processes.js"
import { spawnPath } from "../support/spawnPath.js"

const executor = (config: LocalBashExecutor.Settings.Input = {}) => LocalBashExecutor.layer({ graceMs: 300, ...config })

const host = path.join(import.meta.dirname, "..", "support", "fixtures", "host.mjs")

const run = (request: BashExecutor.Request) =>
  Effect.gen(function*() {
    const bash = yield* BashExecutor
    return yield* bash.run(yield* bash.resolve(request))
  })

/** Spawns `command` with the spawner in context and awaits its exit; or why it did not start. */
const exitOf = (command: string, options: { readonly cwd?: string; readonly env?: Record<string, string> } = {}) =>
  Effect.gen(function*() {
    const spawner = yield* ProcessSpawner
    const spawned = yield* spawner.spawn({
      command,
      cwd: options.cwd ?? "/",
      env: { PATH: process.env.PATH ?? "/usr/bin:/bin", ...options.env }
    })
    return yield* spawned.exit
  }).pipe(Effect.scoped, Effect.either)

/** The layers side by side: the same effect under `layer` (posix_spawn) and `layerDirectSpawn`. */
const underBoth = <A, E>(effect: Effect.Effect<A, E, ProcessSpawner>) =>
  Effect.all([
    Effect.provide(effect, NodeProcessSpawner.layer),
    Effect.provide(effect, NodeProcessSpawner.layerDirectSpawn)
  ])

describe("the host's posix_spawn", () => {
  it.live("is how the default layer spawns; directSpawn is child_process", () =>
    Effect.gen(function*() {
      expect(yield* spawnPath.pipe(Effect.provide(executor()))).toBe("posix_spawn")
      expect(yield* spawnPath.pipe(Effect.provide(executor({ directSpawn: true })))).toBe("child_process")
    }))

  it.live("spawns the commands as the host's own children, with none of its descriptors", () =>
    Effect.gen(function*() {
      for (const directSpawn of [false, true]) {
        const result = yield* run({ command: `echo $PPID; ${listFds}` }).pipe(Effect.provide(executor({ directSpawn })))
        expect(firstPid(result.stdout.text), `directSpawn: ${directSpawn}`).toBe(process.pid)
        // Past stdio only what the host inherited, as /dev/null. (A line without a target is the
        // descriptor bash read the directory with.)
        const beyondStdio = result.stdout.text.trim().split("\n").slice(1)
          .filter((line) => Number(line.split(" ")[0]) > 2 && line.includes(" "))
        expect(beyondStdio.filter((line) => !line.endsWith(" /dev/null")), `directSpawn: ${directSpawn}`).toEqual([])
      }
    }))

  it.live("passes output, stdin bytes and a script too long for argv through whole", () =>
    Effect.gen(function*() {
      const text = "héllo ✓ ".repeat(30_000)
      const digest = createHash("sha256").update(text).digest("hex")
      const input = yield* run({ command: "sha256sum | cut -d' ' -f1", stdin: text })
      expect(input.stdout.text).toBe(`${digest}\n`)

      const output = yield* run({ command: "head -c 3000000 /dev/zero | tr '\\0' a; echo done >&2" })
      expect(output.stdout.truncated).toBe(true)
      expect(fs.statSync(output.stdout.spillPath!).size).toBe(3_000_000)
      expect(output.stderr.text).toBe("done\n")

      const script = yield* run({ command: `: ${"x".repeat(70_000)}\necho "$0 $#"` })
      expect(script.stdout.text).toBe("bash 0\n")
    }).pipe(Effect.provide(executor())))

  it.live("reports an exit code and a killing signal as child_process reports them", () =>
    Effect.gen(function*() {
      const commands = ["exit 0", "exit 7", "exit 255", "kill -TERM $$", "kill -KILL $$", "kill -USR1 $$"]
      const [posix, direct] = yield* underBoth(Effect.forEach(commands, (command) => exitOf(command)))
      expect(posix).toEqual(direct)
      expect(posix.map((exit) => exit._tag === "Right" && exit.right)).toEqual([
        { exitCode: 0, signal: null },
        { exitCode: 7, signal: null },
        { exitCode: 255, signal: null },
        { exitCode: null, signal: "SIGTERM" },
        { exitCode: null, signal: "SIGKILL" },
        { exitCode: null, signal: "SIGUSR1" }
      ])
    }))

  it.live("fails the spawns it cannot serve as child_process fails them: a NUL byte, a bad workdir, a missing or unexecutable shell, an env too big", () =>
    Effect.gen(function*() {
      // A PATH entry holding a `bash` without an execute bit, and one holding a directory named so.
      const unexecutable = yield* Effect.acquireRelease(
        Effect.sync(() => fs.mkdtempSync(path.join(os.tmpdir(), "effect-bash-unexecutable-"))),
        (dir) => Effect.sync(() => fs.rmSync(dir, { recursive: true, force: true }))
      )
      fs.mkdirSync(path.join(unexecutable, "file"))
      fs.writeFileSync(path.join(unexecutable, "file", "bash"), "#!/bin/sh\necho ran\n", { mode: 0o644 })
      fs.mkdirSync(path.join(unexecutable, "directory", "bash"), { recursive: true })
      const requests = [
        { env: { X: "a\0b" } },
        { cwd: "/tmp/a\0b" },
        { cwd: "/nonexistent/workdir" },
        { env: { PATH: "/nonexistent" } },
        { cwd: host },
        // One string past the kernel's per-string limit (`MAX_ARG_STRLEN`, 128 KiB).
        { env: { BIG: "x".repeat(200_000) } },
        // The child changes into its workdir before it looks for its shell.
        { cwd: host, env: { PATH: "/nonexistent" } },
        { env: { PATH: path.join(unexecutable, "file") } },
        { env: { PATH: path.join(unexecutable, "directory") } },
        // Passed over for the next entry, which has one.
        { env: { PATH: `${path.join(unexecutable, "file")}:${process.env.PATH}` } },
        // A host's value that is no string: the child's env has it stringified.
        { env: { PATH: null as unknown as string } }
      ]
      const [posix, direct] = yield* underBoth(
        Effect.forEach(requests, (request) => Effect.map(exitOf("echo ran", request), (outcome) => outcome._tag === "Left" && outcome.left.message))
      )
      expect(posix).toEqual(direct)
      expect(posix[0]).toMatch(/^The property 'options\.env\['X'\]' must be a string without null bytes/)
      expect(posix.slice(2)).toEqual([
        "workdir does not exist: /nonexistent/workdir (ENOENT)",
        "spawn bash ENOENT",
        "spawn ENOTDIR",
        "spawn E2BIG",
        "spawn ENOTDIR",
        "spawn bash EACCES",
        "spawn bash EACCES",
        false,
        "spawn bash ENOENT"
      ])
    }).pipe(Effect.scoped))

  // glibc's posix_spawn sets its internal signals (32 and 33), which `sigfillset` leaves out of the
  // defaults, to SIG_IGN in the child while it execs, if the host handles them (Node does).
  it.live("starts a command with no signal ignored, glibc's internal ones (32 and 33) included, as child_process does", () =>
    Effect.gen(function*() {
      const [posix, direct] = yield* Effect.forEach([false, true], (directSpawn) =>
        Effect.map(run({ command: "grep ^SigIgn: /proc/self/status" }), (result) => result.stdout.text).pipe(
          Effect.provide(executor({ directSpawn }))
        ))
      expect(direct).toBe("SigIgn:\t0000000000000000\n")
      expect(posix).toBe(direct)
    }))

  it.live("keeps a host with nothing else to do alive until a command it let go of ends, and no longer, as a child_process child does", () =>
    Effect.gen(function*() {
      // The fixture closes the spawn's scope and the layer at once, with no runtime keeping it alive.
      for (const [layer, by] of [["layer", "posix_spawn"], ["direct", "child_process"]] as const) {
        // A keep-alive left behind would hold the host until the bound kills it.
        const outcome = yield* Effect.promise(() => runNode([host, "outlived", layer], { env: cleanEnv(), limitMs: 20_000 }))
        expect(outcome.stdout, layer).toBe(`${by} ${JSON.stringify({ exitCode: 5, signal: null })}\n`)
        expect({ code: outcome.code, signal: outcome.signal }, layer).toEqual({ code: 0, signal: null })
      }
    }))

  it.live("meets a host with no descriptor free: the call fails as Node's spawn would, and the command never runs", () =>
    Effect.gen(function*() {
      const marker = path.join(os.tmpdir(), `effect-bash-out-of-fds-${process.pid}-${Date.now()}`)
      const outcome = yield* Effect.promise(() => runNode([host, "out-of-fds", marker], { env: cleanEnv() }))
      const ran = fs.existsSync(marker)
      fs.rmSync(marker, { force: true })
      expect(JSON.parse(outcome.stdout)).toEqual({ error: "spawn bash EMFILE", tag: "SpawnError" })
      expect(ran).toBe(false)
    }))

  it.live("ends with its layers: one SIGCHLD listener for the process however many are open, none once they close", () =>
    Effect.gen(function*() {
      const listeners = process.listenerCount("SIGCHLD")
      const scope = yield* Scope.make()
      // More layers than an emitter's default limit of listeners (10), each spawning.
      for (let i = 0; i < 12; i++) {
        const context = yield* Layer.buildWithScope(NodeProcessSpawner.layer, scope)
        const exit = yield* exitOf(`exit ${i}`).pipe(Effect.provide(context))
        expect(exit._tag === "Right" && exit.right.exitCode).toBe(i)
      }
      expect(process.listenerCount("SIGCHLD")).toBe(Math.max(listeners, 1))
      yield* Scope.close(scope, Exit.void)
      expect(process.listenerCount("SIGCHLD")).toBe(listeners)
    }))

  it.live("learns the exit of a command spawned through it after its layer ended, then lets its SIGCHLD listener go", () =>
    Effect.gen(function*() {
      const listeners = process.listenerCount("SIGCHLD")
      const scope = yield* Scope.make()
      const context = yield* Layer.buildWithScope(NodeProcessSpawner.layer, scope)
      yield* Scope.close(scope, Exit.void)
      // Without a listener the exit would never come: the bound turns that hang into a failure.
      const exit = yield* exitOf("exit 3").pipe(Effect.provide(context), Effect.timeout("10 seconds"))
      expect(exit._tag === "Right" && exit.right.exitCode).toBe(3)
      expect(process.listenerCount("SIGCHLD")).toBe(listeners)
    }))
})

describe("where posix_spawn cannot serve, child_process spawns", () => {
  /** `echo hi` run by the fixture host under the default layer, with `node`'s `flags` and in `mode`. */
  const hostRunning = (flags: ReadonlyArray<string>, mode: ReadonlyArray<string> = []) =>
    Effect.promise(() =>
      runNode([...flags, host, ...mode, "with-env", "echo hi", "PLAIN=1"], { env: cleanEnv(), limitMs: 20_000 })
    )

  it.live("a host without koffi (an optional dependency npm may skip)", () =>
    Effect.gen(function*() {
      const noKoffi = path.join(import.meta.dirname, "..", "support", "fixtures", "no-koffi.mjs")
      const outcome = yield* hostRunning(["--import", noKoffi])
      expect({ code: outcome.code, stdout: outcome.stdout }).toEqual({ code: 0, stdout: "spawned by child_process\nhi\n" })
    }))

  it.live("a worker thread, which no SIGCHLD reaches", () =>
    Effect.gen(function*() {
      const outcome = yield* hostRunning([], ["in-worker"])
      expect({ code: outcome.code, stdout: outcome.stdout }).toEqual({ code: 0, stdout: "spawned by child_process\nhi\n" })
    }))
})

/** The spawner's helper processes among the host's children: the reaper (bash). */
const helpers = () => childrenOf(process.pid).map(commandLineOf).filter(isReaperCommandLine)

describe("the spawner's helpers under startHelpersAfter", () => {
  it.live("start when what they wait for completes, not with the layer", () =>
    Effect.gen(function*() {
      const ready = yield* Deferred.make<void>()
      const scope = yield* Scope.make()
      yield* Layer.buildWithScope(executor().pipe(startHelpersAfter(Deferred.await(ready))), scope)
      expect(helpers()).toEqual([])
      yield* Deferred.succeed(ready, undefined)
      expect(yield* Effect.promise(() => eventually(() => helpers().length === 1))).toBe(true)
      yield* Scope.close(scope, Exit.void)
      expect(helpers()).toEqual([])
    }))

  it.live("started by a first spawn that is interrupted meanwhile, they still start, for the next spawn", () =>
    Effect.gen(function*() {
      // The spawn yields to the scheduler every `ops` operations and is interrupted at its first yield,
      // so across the loop the interruption lands at different steps of the start.
      for (const layer of [NodeProcessSpawner.layer, NodeProcessSpawner.layerDirectSpawn]) {
        for (let ops = 10; ops <= 40; ops++) {
          const scope = yield* Scope.make()
          const context = yield* Layer.buildWithScope(layer.pipe(startHelpersAfter(Effect.never)), scope)
          const spawner = Context.get(context, ProcessSpawner)
          const spawn = Effect.scoped(
            Effect.flatMap(spawner.spawn({ command: "true", cwd: "/", env: {} }), (spawned) => spawned.exit)
          )
          const first = yield* Effect.fork(Effect.withMaxOpsBeforeYield(spawn, ops))
          yield* Effect.yieldNow()
          yield* Fiber.interrupt(first)
          const next = yield* spawn.pipe(Effect.timeout("10 seconds"))
          expect(next.exitCode).toBe(0)
          yield* Scope.close(scope, Exit.void)
        }
      }
    }))

  it.live("whose start meets a host with no descriptor free: that call fails, the next ones run", () =>
    Effect.gen(function*() {
      const outcome = yield* Effect.promise(() => runNode([host, "helpers-out-of-fds"], { env: cleanEnv() }))
      // The outcomes are the JSON lines; the layer's warnings are logged between them.
      const lines = outcome.stdout.split("\n")
      const [first, ...rest] = lines.filter((line) => line.startsWith("{")).map((line) => JSON.parse(line))
      expect(first.error).toMatch(/EMFILE/)
      expect(rest).toEqual([{ stdout: "second\n" }, { stdout: "third\n" }])
      expect(lines.filter((line) => line.includes("host-death reaper failed to start"))).toHaveLength(1)
    }))

  it.live("start with a first spawn that comes first, which posix_spawn serves", () =>
    Effect.gen(function*() {
      expect(helpers()).toEqual([])
      expect(yield* spawnPath).toBe("posix_spawn")
      expect(helpers()).toHaveLength(1)
    }).pipe(Effect.provide(executor().pipe(startHelpersAfter(Effect.never)))))
})
