/**
 * The pre-forked launcher with real processes: commands are its children, their bytes arrive whole,
 * a launcher that dies costs one call at most, and it ends with the layer.
 */
import { describe, expect, it } from "@effect/vitest"
import { Context, Deferred, Effect, Exit, Fiber, Layer, Scope, Stream } from "effect"
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
import { childrenOf, commandLineOf, firstPid, isAlive, isReaperCommandLine, listFds, liveMembers } from "../support/processes.js"
import { untilSuspended } from "../support/fibers.js"
import { launcherPid, parentOfCommand } from "../support/launcher.js"

const executor = (config: LocalBashExecutor.Settings.Input = {}) => LocalBashExecutor.layer({ graceMs: 300, ...config })

const run = (request: BashExecutor.Request) =>
  Effect.gen(function*() {
    const bash = yield* BashExecutor
    return yield* bash.run(yield* bash.resolve(request))
  })

/** A call whose request waits in the launcher, stopped: the launcher, the call, and a file its command writes. */
const heldCall = (name: string, command: (marker: string) => string) =>
  Effect.gen(function*() {
    const launcher = yield* launcherPid
    const marker = path.join(os.tmpdir(), `effect-bash-${name}-${process.pid}-${Date.now()}`)
    process.kill(launcher, "SIGSTOP")
    const call = yield* Effect.fork(run({ command: command(marker) }))
    yield* untilSuspended(call)
    return { launcher, marker, call }
  })

/** Keeps the host's thread busy (no I/O turn) for `ms`. */
const blockFor = (ms: number) => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms)

/** Runs `body` under a layer built with TMPDIR set to a fresh directory of its own. */
const withTmpdir = <A, E>(body: (tmp: string) => Effect.Effect<A, E, BashExecutor>) =>
  Effect.acquireUseRelease(
    Effect.sync(() => {
      const before = process.env.TMPDIR
      const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "eb-gate-test-"))
      process.env.TMPDIR = tmp
      return { before, tmp }
    }),
    ({ tmp }) => body(tmp).pipe(Effect.provide(executor())),
    ({ before, tmp }) =>
      Effect.sync(() => {
        if (before === undefined) delete process.env.TMPDIR
        else process.env.TMPDIR = before
        fs.rmSync(tmp, { recursive: true, force: true })
      })
  )

describe("the launcher", () => {
  it.live("starts the commands, and gives them none of its own descriptors", () =>
    Effect.gen(function*() {
      const launcher = yield* launcherPid
      expect(fs.readFileSync(`/proc/${launcher}/cmdline`, "utf8")).toMatch(/^effect-bash launcher/)
      const result = yield* run({ command: listFds })
      // Past stdio only what the host inherited, as /dev/null; not the launcher's channel (fd 3), nor
      // the /dev/null over it. (A line without a target is the descriptor bash read the directory with.)
      expect(result.stdout.text).not.toMatch(/^3 \//m)
      const beyondStdio = result.stdout.text.trim().split("\n").filter((line) => Number(line.split(" ")[0]) > 2 && line.includes(" "))
      expect(beyondStdio.filter((line) => !line.endsWith(" /dev/null"))).toEqual([])
    }).pipe(Effect.provide(executor())))

  it.live("is not started with directSpawn: the host spawns", () =>
    Effect.gen(function*() {
      expect(yield* parentOfCommand).toBe(process.pid)
    }).pipe(Effect.provide(executor({ directSpawn: true }))))

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

  it.live("that a command kills: that command is killed with its group, the others run on, later calls are spawned by the host", () =>
    Effect.gen(function*() {
      const pidFile = path.join(os.tmpdir(), `effect-bash-launcher-${process.pid}-${Date.now()}`)
      yield* launcherPid
      // The other call's output already reaches the host (the launcher handed it over) when the killer starts.
      const bash = yield* BashExecutor
      const other = yield* bash.runStreaming(yield* bash.resolve({ command: "echo started; sleep 0.5; echo still here" }))
      yield* other.output.pipe(Stream.take(1), Stream.runDrain)
      // Kills its parent, the launcher, whether or not it has handed the pipes over yet.
      const killer = yield* Effect.either(run({ command: `echo $$ > ${pidFile}; kill -KILL $PPID; sleep 100`, timeoutMs: 1_500 }))
      const group = Number(fs.readFileSync(pidFile, "utf8"))
      fs.rmSync(pidFile)
      // Not handed over: the call fails and its group is killed. Handed over: it ends at its timeout.
      if (killer._tag === "Left") expect(killer.left.message).toContain("launcher exited")
      else expect(killer.right.timedOut).toBe(true)
      expect(yield* Effect.promise(() => eventually(() => liveMembers(group).length === 0, 5_000))).toBe(true)
      expect((yield* other.result).stdout.text).toBe("started\nstill here\n")
      expect(yield* parentOfCommand).toBe(process.pid)
    }).pipe(Effect.scoped, Effect.provide(executor())))

  it.live("killed by one command of a burst: each other call runs whole, or fails saying so with its group killed", () =>
    Effect.gen(function*() {
      const directory = fs.mkdtempSync(path.join(os.tmpdir(), "effect-bash-burst-"))
      yield* Effect.addFinalizer(() => Effect.sync(() => fs.rmSync(directory, { recursive: true, force: true })))
      const killer = 7
      const results = yield* Effect.all(
        Array.from({ length: 15 }, (_, i) =>
          Effect.either(run({
            command: i === killer
              ? "kill $PPID; sleep 100"
              : `echo $$ > ${path.join(directory, String(i))}; sleep 0.3; echo done ${i}`,
            timeoutMs: 5_000
          }))),
        { concurrency: "unbounded" }
      )
      // The launcher hands the pipes over one at a time: a command it started whose pipes were still
      // queued has no output the host can read, and its group is killed.
      for (const [i, result] of results.entries()) {
        if (i === killer) continue
        if (result._tag === "Right") {
          expect(result.right.stdout.text, `call ${i}`).toBe(`done ${i}\n`)
          continue
        }
        expect(result.left.message, `call ${i}`).toBe(
          "the launcher exited before handing the command over (a group it had started was killed)"
        )
        // Killed before it wrote its pid, a command has no member left to look for.
        const pidFile = path.join(directory, String(i))
        if (!fs.existsSync(pidFile)) continue
        const group = Number(fs.readFileSync(pidFile, "utf8"))
        expect(yield* Effect.promise(() => eventually(() => liveMembers(group).length === 0, 5_000)), `call ${i}`).toBe(true)
      }
      expect(yield* parentOfCommand).toBe(process.pid)
    }).pipe(Effect.provide(executor()), Effect.scoped))

  it.live("that dies before it started a command: the host spawns that command itself", () =>
    Effect.gen(function*() {
      const { call, launcher, marker } = yield* heldCall("stranded", (marker) => `echo $PPID; echo ran > ${marker}`)
      // Suspended: the request is with the stopped launcher, and the command has not run.
      expect((yield* call.status)._tag).toBe("Suspended")
      expect(fs.existsSync(marker)).toBe(false)
      process.kill(launcher, "SIGKILL")
      const result = yield* Fiber.join(call)
      fs.rmSync(marker)
      expect(firstPid(result.stdout.text)).toBe(process.pid)
    }).pipe(Effect.provide(executor())))

  it.live("that dies before it started a command, under a caller interrupted meanwhile: the command never runs", () =>
    Effect.gen(function*() {
      const { call, launcher, marker } = yield* heldCall("cancelled", (marker) => `echo ran > ${marker}`)
      expect((yield* call.status)._tag).toBe("Suspended")
      // The spawn is uninterruptible: the interruption waits for it, recorded.
      const interrupter = yield* Effect.fork(Fiber.interrupt(call))
      yield* Effect.yieldNow()
      process.kill(launcher, "SIGKILL")
      expect(Exit.isInterrupted(yield* Fiber.join(interrupter))).toBe(true)
      expect(fs.existsSync(marker)).toBe(false)
    }).pipe(Effect.provide(executor())))

  it.live("that dies while the host is busy runs each command once, whichever way each launch ends", () =>
    Effect.gen(function*() {
      const launcher = yield* launcherPid
      const marker = path.join(os.tmpdir(), `effect-bash-once-${process.pid}-${Date.now()}`)
      const first = yield* Effect.fork(Effect.either(run({ command: `echo $$ >> ${marker}; sleep 30`, timeoutMs: 1_500 })))
      yield* untilSuspended(first)
      // A host too busy to read (no I/O turn): the launcher may start the command meanwhile, and
      // dies; the next launch's send then fails before the host has seen the exit.
      yield* Effect.sync(() => {
        blockFor(400)
        process.kill(launcher, "SIGKILL")
        blockFor(100)
      })
      const second = yield* Effect.either(run({ command: "echo second" }))
      yield* Fiber.join(first)
      // Started and killed before its line, started once, or never started and then spawned by the host.
      const lines = fs.existsSync(marker) ? fs.readFileSync(marker, "utf8").trim().split("\n") : []
      fs.rmSync(marker, { force: true })
      expect(lines.length).toBeLessThanOrEqual(1)
      for (const line of lines) {
        expect(yield* Effect.promise(() => eventually(() => liveMembers(Number(line)).length === 0, 5_000))).toBe(true)
      }
      expect(second._tag === "Right" && second.right.stdout.text).toBe("second\n")
    }).pipe(Effect.provide(executor())))

  it.live("is not used for an env that would skip or change its BASH_ENV gate", () =>
    Effect.gen(function*() {
      const envs = [{ POSIXLY_CORRECT: "1" }, { SHELLOPTS: "xtrace" }, { "BASH_FUNC_read%%": "() { :; }" }, {
        TMOUT: "0.000001"
      }]
      yield* launcherPid
      for (const env of envs) {
        const result = yield* run({ command: "echo $PPID; echo \"${BASH_ENV-unset}\"", env })
        expect(result.stdout.text).toBe(`${process.pid}\nunset\n`)
      }
    }).pipe(Effect.provide(executor())))

  it.live("runs nothing a command wrote into any file under TMPDIR (a TMPDIR the command may write)", () =>
    withTmpdir((tmp) =>
      Effect.gen(function*() {
        const marker = path.join(tmp, "payload-ran")
        const append = `find '${tmp}' -type f -exec sh -c 'printf "\\ntouch %s\\n" "$1" >> "$2"' _ '${marker}' {} \\;`
        yield* run({ command: append })
        const later = yield* run({ command: "echo later" })
        expect(later.stdout.text).toBe("later\n")
        expect(fs.existsSync(marker)).toBe(false)
      })
    ))

  it.live("after every file under TMPDIR was removed, still gates its commands", () =>
    withTmpdir((tmp) =>
      Effect.gen(function*() {
        yield* launcherPid
        yield* run({ command: `rm -rf '${tmp}'/* '${tmp}'/.[!.]*` })
        // A command the gate held sees neither the gate's env nor its descriptor, and no error:
        // the launcher's admission (written after the host had the pid) was what let it run.
        const later = yield* run({ command: "[[ -v BASH_ENV ]] && echo BASH_ENV; [[ -e /proc/self/fd/4 ]] && echo fd4; echo $PPID" })
        expect(later.stderr.text).toBe("")
        expect(later.stdout.text).not.toBe(`${process.pid}\n`)
        expect(later.stdout.text).toMatch(/^\d+\n$/)
      })
    ))

  it.live("that was stopped is killed when the layer closes, and a command it held never runs", () =>
    Effect.gen(function*() {
      const scope = yield* Scope.make()
      const layer = yield* Layer.buildWithScope(executor(), scope)
      const launcher = yield* launcherPid.pipe(Effect.provide(layer))
      const marker = path.join(os.tmpdir(), `effect-bash-held-${process.pid}-${Date.now()}`)
      process.kill(launcher, "SIGSTOP")
      const call = yield* Effect.fork(Effect.either(run({ command: `echo ran > ${marker}` })).pipe(Effect.provide(layer)))
      yield* untilSuspended(call)
      yield* Scope.close(scope, Exit.void)
      expect(isAlive(launcher)).toBe(false)
      const outcome = yield* Fiber.join(call)
      expect(outcome._tag === "Left" && outcome.left.message).toContain("the spawner closed before the command started")
      expect(fs.existsSync(marker)).toBe(false)
    }))

  it.live("closed with a command in flight: that command does not outlive the close", () =>
    Effect.gen(function*() {
      const scope = yield* Scope.make()
      const layer = yield* Layer.buildWithScope(executor(), scope)
      yield* launcherPid.pipe(Effect.provide(layer))
      const marker = path.join(os.tmpdir(), `effect-bash-closing-${process.pid}-${Date.now()}`)
      const call = yield* Effect.fork(
        Effect.either(run({ command: `echo $$ > ${marker}; sleep 30`, timeoutMs: 1_500 })).pipe(Effect.provide(layer))
      )
      yield* untilSuspended(call)
      yield* Scope.close(scope, Exit.void)
      const outcome = yield* Fiber.join(call)
      // Started before the launcher ended, and then killed (perhaps before its first line); or never
      // started, and then never run.
      if (fs.existsSync(marker)) {
        const group = firstPid(fs.readFileSync(marker, "utf8"))
        fs.rmSync(marker)
        expect(yield* Effect.promise(() => eventually(() => liveMembers(group).length === 0, 5_000))).toBe(true)
      } else {
        expect(outcome._tag === "Left" && outcome.left.message).toMatch(
          /the spawner closed before the command (started|was handed over \(its group was killed\))/
        )
      }
    }))

  it.live("closes within its bounds while another process holds the launcher's stdout", () =>
    Effect.gen(function*() {
      const scope = yield* Scope.make()
      const layer = yield* Layer.buildWithScope(executor(), scope)
      const holderFile = path.join(os.tmpdir(), `effect-bash-holder-${process.pid}-${Date.now()}`)
      // A command of the same user takes the launcher's stdout (pidfd_getfd, as root or without Yama)
      // and leaves it with a process in a session of its own.
      const take = `perl -MPOSIX -e '
        my $fd = syscall(438, syscall(434, getppid(), 0), 1, 0); die "pidfd_getfd: $!" if $fd < 0;
        open(my $held, "+<&=", $fd) or die; fcntl($held, F_SETFD, 0);
        my $pid = fork(); if ($pid == 0) { POSIX::setsid(); exec("sleep", "30") }
        open(my $out, ">", "${holderFile}"); print $out $pid'`
      const taken = yield* run({ command: take }).pipe(Effect.provide(layer))
      expect(taken.stderr.text).toBe("")
      const holder = Number(fs.readFileSync(holderFile, "utf8"))
      fs.rmSync(holderFile)
      yield* Effect.addFinalizer(() => Effect.sync(() => process.kill(holder, "SIGKILL")))
      const closed = yield* Scope.close(scope, Exit.void).pipe(Effect.timeout("5 seconds"), Effect.either)
      expect(closed._tag).toBe("Right")
    }).pipe(Effect.scoped))

  it.live("whose pipes the host cannot receive (no descriptor free): the call says the command ran and its output is lost", () =>
    Effect.gen(function*() {
      const marker = path.join(os.tmpdir(), `effect-bash-out-of-fds-${process.pid}-${Date.now()}`)
      const host = path.join(import.meta.dirname, "..", "support", "fixtures", "host.mjs")
      const outcome = yield* Effect.promise(() => runNode([host, "out-of-fds", marker], { env: cleanEnv() }))
      const ran = fs.existsSync(marker) ? fs.readFileSync(marker, "utf8") : ""
      fs.rmSync(marker, { force: true })
      expect(ran).toBe("ran\n")
      // `echo out` may find its pipe's only reader gone with the transfer (SIGPIPE).
      expect(JSON.parse(outcome.stdout).error).toMatch(
        /^the command ran \((exit code 0|killed by SIGPIPE)\), but the launcher could not hand its output over \(is the host out of file descriptors\?\): its output is lost$/
      )
    }))

  it.live("ends with the layer", () =>
    Effect.gen(function*() {
      const scope = yield* Scope.make()
      const layer = yield* Layer.buildWithScope(executor(), scope)
      const launcher = yield* launcherPid.pipe(Effect.provide(layer))
      expect(isAlive(launcher)).toBe(true)
      yield* Scope.close(scope, Exit.void)
      expect(isAlive(launcher)).toBe(false)
    }))
})

/** The spawner's helper processes among the host's children: the reaper (bash) and the launcher. */
const helpers = () =>
  childrenOf(process.pid).map(commandLineOf).filter((line) =>
    isReaperCommandLine(line) || line.startsWith("effect-bash launcher") ||
    line.includes("launcherMain.js")
  )

describe("the spawner's helpers under startHelpersAfter", () => {
  it.live("start when what they wait for completes, not with the layer", () =>
    Effect.gen(function*() {
      const ready = yield* Deferred.make<void>()
      const scope = yield* Scope.make()
      yield* Layer.buildWithScope(executor().pipe(startHelpersAfter(Deferred.await(ready))), scope)
      expect(helpers()).toEqual([])
      yield* Deferred.succeed(ready, undefined)
      expect(yield* Effect.promise(() => eventually(() => helpers().length === 2))).toBe(true)
      yield* Scope.close(scope, Exit.void)
      expect(helpers()).toEqual([])
    }))

  it.live("started by a first spawn that is interrupted meanwhile, they still start, for the next spawn", () =>
    Effect.gen(function*() {
      // The spawn yields to the scheduler every `ops` operations and is interrupted at its first yield,
      // so across the loop the interruption lands at different steps of the start.
      for (let ops = 10; ops <= 40; ops++) {
        const scope = yield* Scope.make()
        const context = yield* Layer.buildWithScope(
          NodeProcessSpawner.layerDirectSpawn.pipe(startHelpersAfter(Effect.never)),
          scope
        )
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
    }))

  it.live("whose start meets a host with no descriptor free: that call fails, the next ones run", () =>
    Effect.gen(function*() {
      const host = path.join(import.meta.dirname, "..", "support", "fixtures", "host.mjs")
      const outcome = yield* Effect.promise(() => runNode([host, "helpers-out-of-fds"], { env: cleanEnv() }))
      // The outcomes are the JSON lines; the layer's warnings are logged between them.
      const lines = outcome.stdout.split("\n")
      const [first, ...rest] = lines.filter((line) => line.startsWith("{")).map((line) => JSON.parse(line))
      expect(first.error).toMatch(/EMFILE/)
      expect(rest).toEqual([{ stdout: "second\n" }, { stdout: "third\n" }])
      expect(lines.filter((line) => line.includes("host-death reaper failed to start"))).toHaveLength(1)
    }))

  it.live("start with a first spawn that comes first, which then runs through the launcher", () =>
    Effect.gen(function*() {
      expect(helpers()).toEqual([])
      const parent = yield* parentOfCommand
      expect(helpers()).toHaveLength(2)
      expect(commandLineOf(parent)).toMatch(/^effect-bash launcher/)
    }).pipe(Effect.provide(executor().pipe(startHelpersAfter(Effect.never)))))
})
