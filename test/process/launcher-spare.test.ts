/**
 * The launcher's spare: a bash it starts while idle, for the last call's cwd, env and stdio, that
 * the next call runs in. The command there is the same `bash -c` as in a fresh bash; a spare that no
 * longer fits is not used; none outlives the layer or its launcher; a request cut off never runs.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Exit, Layer, Scope } from "effect"
import * as ChildProcess from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import type { Writable } from "node:stream"
import * as LocalBashExecutor from "../../src/layers/LocalBashExecutor.js"
import { spareRequest, spareScript, spareSwitch } from "../../src/layers/internal/spawner/spare.js"
import { BashExecutor } from "../../src/services/BashExecutor.js"
import { descendantsOf, eventually } from "../support/cli.js"
import { firstPid, isAlive, listFds, stateOf } from "../support/processes.js"

const executor = LocalBashExecutor.layer({ graceMs: 300 })

const run = (request: BashExecutor.Request) =>
  Effect.gen(function*() {
    const bash = yield* BashExecutor
    return yield* bash.run(yield* bash.resolve(request))
  })

const launcherPid = Effect.map(run({ command: "echo $PPID" }), (result) => firstPid(result.stdout.text))

const read = (file: string) => {
  try {
    return fs.readFileSync(file, "latin1")
  } catch {
    return ""
  }
}

/** The launcher's spare, once there is one; `waiting`: once it has said it waits (its one write). */
const spareOf = (launcher: number, waiting = false) =>
  Effect.promise(async () => {
    let spare: number | undefined
    const found = await eventually(() => {
      spare = descendantsOf(launcher).find((pid) => read(`/proc/${pid}/cmdline`).endsWith("\0effect-bash spare\0"))
      return spare !== undefined && (!waiting || /^syscw: [1-9]/m.test(read(`/proc/${spare}/io`)))
    }, 5_000)
    if (!found) throw new Error("no spare")
    return spare!
  })

/** The bash on the test's own PATH, by path. */
const bashPath = ChildProcess.execFileSync("bash", ["-c", "command -v bash"], { encoding: "utf8" }).trim()

/** Whether `pid` ends (dies, or is a zombie) within 5 s. */
const ended = (pid: number) => Effect.promise(() => eventually(() => !isAlive(pid), 5_000))

/**
 * A launcher whose spares are proven to work: the next call runs in the spare there is then. Proven
 * once a call ran in a spare: a spare that has said it waits is taken only once the launcher has read
 * that, which a loaded machine may delay past the next call (that call then spawns its own bash).
 */
const warmLauncher = Effect.gen(function*() {
  const launcher = yield* launcherPid
  for (let attempt = 1; ; attempt++) {
    const spare = yield* spareOf(launcher, true)
    const served = yield* run({ command: "echo $$" })
    if (firstPid(served.stdout.text) === spare) return launcher
    if (attempt === 20) throw new Error("no call ran in the launcher's spare")
  }
})

/** Everything a command can see of its shell but its pid: options, traps, limits, env, descriptors. */
const probe = [
  "echo $$",
  "echo \"$PPID $0 $# $SHLVL $- [$BASH_EXECUTION_STRING] $BASH\"",
  "shopt -p; set -o; trap -p; ulimit -a; umask; pwd",
  "env -u _ | sort",
  listFds,
  "echo err >&2; exit 3"
].join("\n")

/** The output past the pid line, with pipe and socket inode numbers (`pipe:[123]`) left out. */
const withoutPid = (text: string) => text.slice(text.indexOf("\n") + 1).replace(/:\[\d+\]/g, "")

describe("the launcher's spare", () => {
  it.live("runs the next call as a fresh bash would: same output, stderr and exit", () =>
    Effect.gen(function*() {
      const cold = yield* run({ command: probe })
      const launcher = yield* warmLauncher
      const spare = yield* spareOf(launcher)
      const warm = yield* run({ command: probe })
      expect(firstPid(warm.stdout.text)).toBe(spare)
      expect(firstPid(cold.stdout.text)).not.toBe(spare)
      expect(withoutPid(warm.stdout.text)).toBe(withoutPid(cold.stdout.text))
      expect([warm.stderr.text, warm.exitCode]).toEqual(["err\n", 3])
      expect([cold.stderr.text, cold.exitCode]).toEqual(["err\n", 3])
    }).pipe(Effect.provide(executor)))

  it.live("serves calls with stdin and with a script too long for argv", () =>
    Effect.gen(function*() {
      const launcher = yield* warmLauncher
      yield* run({ command: "cat", stdin: "first" })
      const withStdin = yield* spareOf(launcher)
      const input = yield* run({ command: "echo $$; cat", stdin: "it's\nthere" })
      expect(input.stdout.text).toBe(`${withStdin}\nit's\nthere`)

      const script = (n: number) => `: ${"x".repeat(70_000)}\necho "$$ $0 $# ${n}"`
      yield* run({ command: script(1) })
      const withScript = yield* spareOf(launcher)
      const long = yield* run({ command: script(2) })
      expect(long.stdout.text).toBe(`${withScript} bash 0 2\n`)
    }).pipe(Effect.provide(executor)))

  it.live("is not used for another workdir, env, or a directory replaced at the same path; it is killed", () =>
    Effect.gen(function*() {
      const directory = fs.mkdtempSync(path.join(os.tmpdir(), "effect-bash-spare-"))
      yield* Effect.addFinalizer(() => Effect.sync(() => fs.rmSync(directory, { recursive: true, force: true })))
      const launcher = yield* warmLauncher
      const inDirectory = { command: "echo $$; pwd -P; echo ${X-unset}", workdir: directory }
      const cases = [
        { request: { ...inDirectory, workdir: os.tmpdir() }, before: () => {}, expected: `${fs.realpathSync(os.tmpdir())}\nunset\n` },
        { request: { ...inDirectory, env: { X: "1" } }, before: () => {}, expected: `${directory}\n1\n` },
        {
          request: inDirectory,
          before: () => {
            fs.rmSync(directory, { recursive: true })
            fs.mkdirSync(directory)
          },
          expected: `${directory}\nunset\n`
        }
      ]
      for (const { before, expected, request } of cases) {
        yield* run(inDirectory)
        const spare = yield* spareOf(launcher)
        before()
        const result = yield* run(request)
        expect(withoutPid(result.stdout.text)).toBe(expected)
        expect(firstPid(result.stdout.text)).not.toBe(spare)
        expect(yield* ended(spare)).toBe(true)
      }
    }).pipe(Effect.provide(executor), Effect.scoped))

  it.live("is not used for a long command (bash would read it byte by byte), and stays for the next", () =>
    Effect.gen(function*() {
      const launcher = yield* warmLauncher
      const spare = yield* spareOf(launcher)
      const long = yield* run({ command: `echo $$; : ${"x".repeat(2_000)}` })
      expect(firstPid(long.stdout.text)).not.toBe(spare)
      expect(isAlive(spare)).toBe(true)
      const short = yield* run({ command: "echo $$" })
      expect(firstPid(short.stdout.text)).toBe(spare)
    }).pipe(Effect.provide(executor)))

  it.live("is not used when stopped, or when the PATH's bash is gone: the call runs, or fails, as without one", () =>
    Effect.gen(function*() {
      const launcher = yield* warmLauncher
      const stopped = yield* spareOf(launcher)
      process.kill(stopped, "SIGSTOP")
      // Stopped once it has taken the signal: a spare stopped after the launcher checked it cannot be told apart.
      expect(yield* Effect.promise(() => eventually(() => stateOf(stopped) === "T", 5_000))).toBe(true)
      const result = yield* run({ command: "echo $$", timeoutMs: 10_000 })
      expect(result.timedOut).toBe(false)
      expect(firstPid(result.stdout.text)).not.toBe(stopped)
      expect(yield* ended(stopped)).toBe(true)

      const bin = fs.mkdtempSync(path.join(os.tmpdir(), "effect-bash-spare-bin-"))
      yield* Effect.addFinalizer(() => Effect.sync(() => fs.rmSync(bin, { recursive: true, force: true })))
      fs.symlinkSync(bashPath, path.join(bin, "bash"))
      const env = { PATH: bin }
      yield* run({ command: "true", env })
      const spare = yield* spareOf(launcher)
      fs.rmSync(path.join(bin, "bash"))
      const gone = yield* Effect.either(run({ command: "echo ran", env }))
      expect(gone._tag === "Left" && gone.left.message).toContain("ENOENT")
      expect(yield* ended(spare)).toBe(true)
    }).pipe(Effect.provide(executor), Effect.scoped))

  it.live("runs the binary the launcher found on PATH, as a fresh spawn does, not one bash's own search finds", () =>
    Effect.gen(function*() {
      // bash expands a PATH entry starting with `~`; Node's search (a fresh spawn's) does not.
      const home = fs.mkdtempSync(path.join(os.tmpdir(), "effect-bash-spare-home-"))
      yield* Effect.addFinalizer(() => Effect.sync(() => fs.rmSync(home, { recursive: true, force: true })))
      fs.mkdirSync(path.join(home, "bin"))
      fs.writeFileSync(path.join(home, "bin", "bash"), "#!/bin/sh\necho wrapper >&2\nexec bash \"$@\"\n", { mode: 0o755 })
      const env = { HOME: home, PATH: `~/bin:${process.env.PATH}` }
      const launcher = yield* warmLauncher
      yield* run({ command: "true", env })
      const spare = yield* spareOf(launcher)
      const result = yield* run({ command: "echo $$", env })
      expect(firstPid(result.stdout.text)).toBe(spare)
      expect(result.stderr.text).toBe("")
    }).pipe(Effect.provide(executor), Effect.scoped))

  it.live("whose binary is not the one its PATH names (a wrapper script named bash) is killed once it waits", () =>
    Effect.gen(function*() {
      const bin = fs.mkdtempSync(path.join(os.tmpdir(), "effect-bash-spare-wrapper-"))
      yield* Effect.addFinalizer(() => Effect.sync(() => fs.rmSync(bin, { recursive: true, force: true })))
      const log = path.join(bin, "log")
      fs.writeFileSync(path.join(bin, "bash"), `#!/bin/sh\necho "$$ $*" >> ${log}\nexec ${bashPath} "$@"\n`, { mode: 0o755 })
      const env = { PATH: `${bin}:${process.env.PATH}` }
      yield* warmLauncher
      yield* run({ command: "true", env })
      let spare = 0
      const started = () => {
        const line = read(log).split("\n").find((each) => each.endsWith(" effect-bash spare"))
        spare = line === undefined ? 0 : Number(line.split(" ")[0])
        return spare !== 0
      }
      expect(yield* Effect.promise(() => eventually(started, 5_000))).toBe(true)
      expect(yield* ended(spare)).toBe(true)
      const result = yield* run({ command: "echo $$", env })
      expect(firstPid(result.stdout.text)).not.toBe(spare)
    }).pipe(Effect.provide(executor), Effect.scoped))

  it.live("whose workdir cannot be checked any more (a path through a file) leaves the launcher serving", () =>
    Effect.gen(function*() {
      const directory = fs.mkdtempSync(path.join(os.tmpdir(), "effect-bash-spare-"))
      yield* Effect.addFinalizer(() => Effect.sync(() => fs.rmSync(directory, { recursive: true, force: true })))
      const workdir = path.join(directory, "x", "y")
      fs.mkdirSync(workdir, { recursive: true })
      const launcher = yield* warmLauncher
      yield* run({ command: "true", workdir })
      const spare = yield* spareOf(launcher)
      fs.rmSync(path.join(directory, "x"), { recursive: true })
      fs.writeFileSync(path.join(directory, "x"), "")
      const failed = yield* Effect.either(run({ command: "echo ran", workdir }))
      expect(failed._tag).toBe("Left")
      expect(yield* ended(spare)).toBe(true)
      expect(yield* launcherPid).toBe(launcher)
    }).pipe(Effect.provide(executor), Effect.scoped))

  it.live("taken while still starting, under concurrent calls with pauses, runs each command whole", () =>
    Effect.gen(function*() {
      yield* warmLauncher
      // Pauses let spares start; the other streams' calls take them before they wait, while the
      // launcher is busy: a command can then end before the launcher hears that its spare waited.
      const stream = (seed: number) =>
        Effect.forEach(Array.from({ length: 25 }, (_, i) => i), (i) =>
          Effect.gen(function*() {
            yield* Effect.sleep(`${(seed * 7 + i * 5) % 13} millis`)
            const result = yield* run({ command: "echo ok" })
            expect([result.stdout.text, result.exitCode]).toEqual(["ok\n", 0])
          }))
      yield* Effect.all(Array.from({ length: 8 }, (_, seed) => stream(seed)), { concurrency: "unbounded" })
      const launcher = yield* launcherPid
      const spare = yield* spareOf(launcher, true)
      expect(firstPid((yield* run({ command: "echo $$" })).stdout.text)).toBe(spare)
    }).pipe(Effect.provide(executor)))

  it.live("is not kept by a launcher started with the switch off (what the bench compares against)", () =>
    Effect.gen(function*() {
      spareSwitch.enabled = false
      const off = yield* Layer.build(executor).pipe(Effect.ensuring(Effect.sync(() => (spareSwitch.enabled = true))))
      const withoutSpare = yield* launcherPid.pipe(Effect.provide(off))
      const withSpare = yield* launcherPid
      // The launcher with the switch on, called later, has its spare waiting by now.
      yield* spareOf(withSpare, true)
      expect(descendantsOf(withoutSpare)).toEqual([])
    }).pipe(Effect.provide(executor), Effect.scoped))

  it.live("ends with the layer, and with a launcher that was killed", () =>
    Effect.gen(function*() {
      for (const end of ["close", "kill"] as const) {
        const scope = yield* Scope.make()
        const layer = yield* Layer.buildWithScope(executor, scope)
        const launcher = yield* launcherPid.pipe(Effect.provide(layer))
        const spare = yield* spareOf(launcher)
        if (end === "kill") process.kill(launcher, "SIGKILL")
        else yield* Scope.close(scope, Exit.void)
        expect(yield* ended(spare)).toBe(true)
        yield* Scope.close(scope, Exit.void)
      }
    }))

  it.live("runs a whole request's argv word for word, and a request cut off not at all", () =>
    Effect.gen(function*() {
      const words = ["it's", "", "a\nb", "$HOME `id` \\ \"q\"", "héllo ✓", "-x", "."]
      const marker = path.join(os.tmpdir(), `effect-bash-spare-cut-${process.pid}-${Date.now()}`)
      const start = (request: string) =>
        Effect.promise(() =>
          new Promise<{ readonly code: number | null; readonly stdout: string }>((resolve) => {
            const child = ChildProcess.spawn("bash", ["--norc", "--noprofile", "-c", "--", spareScript(false), "spare"], {
              stdio: ["ignore", "pipe", "ignore", "ignore", "pipe", "pipe"]
            })
            let stdout = ""
            child.stdout!.setEncoding("utf8").on("data", (text: string) => (stdout += text))
            ;((child.stdio as ReadonlyArray<unknown>)[5] as Writable).end(request)
            child.once("close", (code) => resolve({ code, stdout }))
          })
        )
      // The binary runs under the argv's first word (what `ps` shows), with the rest as its arguments.
      const printArgs = "read -r -d '' name < /proc/$$/cmdline; printf '%s\\0' \"$name\" \"$0\" \"$@\""
      const whole = yield* start(spareRequest(bashPath, ["named", "-c", printArgs, ...words]))
      expect(whole).toEqual({ code: 0, stdout: ["named", ...words].map((word) => `${word}\0`).join("") })

      const request = spareRequest(bashPath, ["bash", "-c", `echo ran > ${marker}`])
      for (const cut of [request.slice(0, -1), request.slice(0, -2), request.slice(0, 10), ""]) {
        expect((yield* start(cut)).code).toBe(125)
        expect(fs.existsSync(marker)).toBe(false)
      }
    }))
})
