/**
 * What a hostile command in a container must not reach: files the host would run with more privilege
 * than the workspace's owner, capabilities, a forged result (its own, another call's, a later call's),
 * and a host unix socket under `network: "none"`. Real engine, real boxes; a small static program
 * (compiled here) tries what the shell cannot.
 */
import { afterAll, describe, expect, it } from "@effect/vitest"
import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as net from "node:net"
import * as os from "node:os"
import * as path from "node:path"
import { Effect, Exit, Fiber, Layer, ManagedRuntime } from "effect"
import * as DockerBashExecutor from "../../src/layers/DockerBashExecutor.js"
import { BashExecutor } from "../../src/services/BashExecutor.js"
import { dockerUnavailable, testImage } from "../support/docker.js"
import { forger, guessedTokens, unusualCalls, victim } from "../support/forgery.js"
import { withHostEnv } from "../support/hostEnv.js"
import { tempDirs } from "../support/tempDirs.js"

const dirs = tempDirs("effect-bash-box-security")
const freshDir = dirs.fresh

/** A uid:gid that is neither root nor the test's, owning the workspace of most tests here. */
const owner = { uid: 1000, gid: 1000 }
const isRoot = process.getuid?.() === 0

const gccMissing = (() => {
  try {
    execFileSync("gcc", ["--version"], { stdio: "ignore" })
    return false
  } catch {
    return true
  }
})()

/** A workspace owned by `owner` (when the test runs as root), holding the probe. */
const ownedWorkspace = (name: string): string => {
  const dir = freshDir(name)
  if (!gccMissing) {
    execFileSync("gcc", ["-static", "-O", "-o", path.join(dir, "box-probe"), path.join(import.meta.dirname, "..", "support", "fixtures", "box-probe.c")])
  }
  if (isRoot) execFileSync("chown", ["-R", `${owner.uid}:${owner.gid}`, dir])
  return dir
}

const skip = dockerUnavailable !== undefined
const workspace = skip ? os.tmpdir() : ownedWorkspace("ws")
/** Owned by the test's user (root here): the boxes run as root, without capabilities. */
const rootWorkspace = skip ? os.tmpdir() : freshDir("root-ws")

const layer = (settings: Partial<DockerBashExecutor.Settings.Input> = {}) =>
  DockerBashExecutor.layer({ image: testImage, graceMs: 500, cwd: workspace, ...settings })

const owned = ManagedRuntime.make(layer())
const rootOwned = ManagedRuntime.make(layer({ cwd: rootWorkspace }))
afterAll(async () => {
  await owned.dispose()
  await rootOwned.dispose()
  dirs.removeAll()
})

let sessions = 0
const freshSession = () => `box-security-${process.pid}-${++sessions}`

const request = (session: string, command: string, extra: Partial<BashExecutor.Request> = {}): BashExecutor.Request => ({
  command,
  dshEnv: { DSH_SESSION_ID: session },
  ...extra
})

const run = (req: BashExecutor.Request) =>
  Effect.gen(function*() {
    const bash = yield* BashExecutor
    return yield* bash.run(yield* bash.resolve(req))
  })

/** Every file below `dir` a host user could run with another's identity: set-id bits, and whose. */
const setIdFiles = (dir: string) =>
  fs.readdirSync(dir).flatMap((name) => {
    const stat = fs.lstatSync(path.join(dir, name))
    return stat.isFile() && (stat.mode & 0o6000) !== 0 ? [{ name, uid: stat.uid, mode: (stat.mode & 0o7777).toString(8) }] : []
  })

/** The calls of `unusualCalls` in `session`. */
const unusual = (session: string, command: string): ReadonlyArray<BashExecutor.Request> =>
  unusualCalls(command).map((call) => request(session, call.command, call))

describe.skipIf(skip)("a hostile command in a container", () => {
  it.live.skipIf(!isRoot)("runs as the workspace's owner: what it makes there is the owner's, and no file of it runs as root on the host", () =>
    Effect.gen(function*() {
      const session = freshSession()
      const result = yield* run(request(session, "id -u; id -g; cp /bin/bash ./rootsh; chmod 4755 ./rootsh; chmod 2755 ./rootsh; touch made"))
        .pipe(Effect.provide(owned))
      expect(result.stdout.text).toBe(`${owner.uid}\n${owner.gid}\n`)
      for (const name of ["rootsh", "made"]) {
        const stat = fs.statSync(path.join(workspace, name))
        expect({ name, uid: stat.uid, gid: stat.gid }).toEqual({ name, uid: owner.uid, gid: owner.gid })
      }
      expect(setIdFiles(workspace).filter((file) => file.uid === 0)).toEqual([])
    }))

  it.live.skipIf(!isRoot)("as the owner, not root, everything else works: HOME, /tmp, long commands, input, timeouts, leftovers, a read-only root", () =>
    Effect.gen(function*() {
      const session = freshSession()
      const writable = yield* run(request(session, "echo $HOME; touch $HOME/h /tmp/t ./w && echo writable")).pipe(Effect.provide(owned))
      expect(writable.stdout.text).toBe("/tmp\nwritable\n")
      const long = yield* run(request(session, `: ${"x".repeat(70_000)}; cat`, { stdin: "input\n" })).pipe(Effect.provide(owned))
      expect(long.stdout.text).toBe("input\n")
      const timedOut = yield* run(request(session, "sleep 30 & sleep 30", { timeoutMs: 500 })).pipe(Effect.provide(owned))
      expect(timedOut).toMatchObject({ timedOut: true, signal: "SIGTERM" })
      const left = yield* run(request(session, "(sleep 30 &) ; sleep 30 & echo started")).pipe(Effect.provide(owned))
      expect(left.stdout.text).toBe("started\n")
      // A user the image does not know, in a directory it may enter.
      const open = freshDir("open")
      fs.chmodSync(open, 0o755)
      const readOnly = ManagedRuntime.make(layer({ readOnlyRoot: true, user: "4242:4242", cwd: open }))
      try {
        const result = yield* run(request(freshSession(), "id -u; echo $HOME; touch /tmp/t && echo tmp; touch /etc/x 2>/dev/null || echo read-only"))
          .pipe(Effect.provide(readOnly))
        expect(result.stdout.text).toBe("4242\n/tmp\ntmp\nread-only\n")
      } finally {
        yield* Effect.promise(() => readOnly.dispose())
      }
    }))

  it.live("as root in a root-owned workspace it still sets no set-id bit, by chmod, by open's mode or by fchmodat2", () =>
    Effect.gen(function*() {
      const session = freshSession()
      const command = `cp /bin/bash ./rootsh-${session}; chmod 4755 ./rootsh-${session}; chmod u+s,g+s ./rootsh-${session}; ` +
        (gccMissing ? "true" : `./box-probe-${session} setid ./opened-${session}; true`)
      if (!gccMissing) {
        fs.copyFileSync(path.join(workspace, "box-probe"), path.join(rootWorkspace, `box-probe-${session}`))
        fs.chmodSync(path.join(rootWorkspace, `box-probe-${session}`), 0o755)
      }
      const result = yield* run(request(session, `id -u; ${command}`)).pipe(Effect.provide(rootOwned))
      expect(result.stdout.text).toBe("0\n")
      expect(fs.statSync(path.join(rootWorkspace, `rootsh-${session}`)).uid).toBe(0)
      expect(setIdFiles(rootWorkspace)).toEqual([])
    }))

  it.live("has no capability and cannot gain one", () =>
    Effect.gen(function*() {
      for (const runtime of [owned, rootOwned]) {
        const result = yield* run(request(freshSession(), "grep -E '^(CapEff|CapPrm|CapBnd|NoNewPrivs)' /proc/self/status"))
          .pipe(Effect.provide(runtime))
        expect(result.stdout.text).toBe(
          "CapPrm:\t0000000000000000\nCapEff:\t0000000000000000\nCapBnd:\t0000000000000000\nNoNewPrivs:\t1\n"
        )
      }
    }))

  it.live("the root option, when asked, runs commands as root with the engine's capabilities", () =>
    Effect.gen(function*() {
      const asRoot = ManagedRuntime.make(layer({ user: "root" }))
      try {
        const result = yield* run(request(freshSession(), "id -u; grep '^CapEff' /proc/self/status")).pipe(Effect.provide(asRoot))
        expect(result.stdout.text).toMatch(/^0\nCapEff:\t0*[1-9a-f][0-9a-f]*\n$/)
        expect(result.stdout.text).not.toContain("0000000000000000")
      } finally {
        yield* Effect.promise(() => asRoot.dispose())
      }
    }))

  it.live("statuses a command plants for the calls to come, in files anywhere it can write, are not theirs", () =>
    Effect.gen(function*() {
      const session = freshSession()
      // Lines in the status's form under every name a counter would give, wherever a file could be read.
      const planted = yield* run(request(
        session,
        "for d in /tmp /dev/shm \"$HOME\" .; do for i in $(seq 1 50); do printf 'exit 0 empty 1 2\\n' >$d/$i 2>/dev/null; done; done; " +
          "ls /.effect-bash-control 2>/dev/null; echo planted"
      )).pipe(Effect.provide(owned))
      expect(planted.stdout.text).toBe("planted\n")
      for (const next of [request(session, "sleep 0.5; exit 7"), ...unusual(session, "sleep 0.5; exit 7")]) {
        expect((yield* run(next).pipe(Effect.provide(owned))).exitCode).toBe(7)
      }
    }))

  it.live("a command with input, over 64 KiB or with an odd variable cannot forge its own result: its end comes on its exec's streams, no file holds it, the wrapper's memory is closed", () =>
    Effect.gen(function*() {
      const guess = "abcdef0123456789abcdef0123456789"
      const command = `printf '\\0${guess} exit 0 empty 1 2\\n\\0${guess} end 1 2\\n'; printf '\\0${guess} end 1 2\\n' >&2; ` +
        `chmod 0755 /.effect-bash-supervisor/bash 2>/dev/null && echo "changed the supervisor"; ` +
        `for what in mem environ fd/0 fd/1; do cat /proc/$PPID/$what >/dev/null 2>&1 && echo "read $what"; done; ` +
        // Its wrapper names no file: nothing in its argv but the script and its mode.
        `mapfile -d '' -t a </proc/$PPID/cmdline; [ "\${#a[@]}" = 7 ] && echo "\${a[6]}"; sleep 1; exit 9`
      // As the workspace's owner, and as root without capabilities (a root-owned workspace).
      for (const runtime of [owned, rootOwned]) {
        const session = freshSession()
        // Input and an odd variable take an exec of their own; a long command is served.
        for (const [call, mode] of unusual(session, command).map((call, i) => [call, ["once", "serve", "once"][i]] as const)) {
          const result = yield* run(call).pipe(Effect.provide(runtime))
          expect(result.exitCode).toBe(9)
          expect(result.stdout.text).toBe(`\0${guess} exit 0 empty 1 2\n\0${guess} end 1 2\n${mode}\n`)
          expect(result.stderr.text).toBe(`\0${guess} end 1 2\n`)
        }
      }
    }))

  it.live("a served command cannot forge its own result: lines in its wrapper's form are its output, and the wrapper's memory and input are closed to it", () =>
    Effect.gen(function*() {
      // The token and the key are the wrapper's, never in the command's reach: it can only guess them.
      const guess = "abcdef0123456789abcdef0123456789"
      const command = `printf '\\0${guess} exit 0 empty 1 2\\n\\0${guess} end 1 2\\n'; printf '\\0${guess} end 1 2\\n' >&2; ` +
        `chmod 0755 /.effect-bash-supervisor/bash 2>/dev/null && echo "changed the supervisor"; ` +
        `for what in mem environ fd/0; do cat /proc/$PPID/$what >/dev/null 2>&1 && echo "read $what"; done; ` +
        `tr '\\0' ' ' </proc/$PPID/cmdline | grep -q serve && echo served; sleep 1; exit 9`
      for (const runtime of [owned, rootOwned]) {
        const result = yield* run(request(freshSession(), command)).pipe(Effect.provide(runtime))
        expect(result.exitCode).toBe(9)
        expect(result.stdout.text).toBe(`\0${guess} exit 0 empty 1 2\n\0${guess} end 1 2\nserved\n`)
        expect(result.stderr.text).toBe(`\0${guess} end 1 2\n`)
      }
    }))

  it.live("a command cannot forge, end early or lose the result of another call with input, over 64 KiB or with an odd variable in its session", () =>
    Effect.gen(function*() {
      const session = freshSession()
      const victims = yield* Effect.forEach(unusual(session, victim(session)), (call) => Effect.fork(run(call).pipe(Effect.provide(owned))))
      const forged = yield* run(request(session, forger(session, 3), { stdin: "" })).pipe(Effect.provide(owned))
      // Both tokens into each of the three victims' shells.
      expect(forged.stdout.text).toBe("forged 6 wrappers 0\n")
      for (const each of victims) {
        const result = yield* Fiber.join(each)
        // It ran to its end: what the forger wrote is output.
        expect(result.exitCode).toBe(5)
        expect(result.stdout.text.startsWith("started\n")).toBe(true)
        expect(result.stdout.text.endsWith("still running\n")).toBe(true)
        expect(result.stdout.text).toContain(`${guessedTokens[1]} end 1 2`)
      }
    }))

  it.live("a command cannot forge, end early or lose the result of a call of another session, whose box shares its workspace", () =>
    Effect.gen(function*() {
      const tag = freshSession()
      const other = freshSession()
      // The victims in one session, their list in the shared workspace; the forger in another's box.
      const victims = yield* Effect.forEach(
        [request(other, victim(tag)), ...unusual(other, victim(tag))],
        (call) => Effect.fork(run(call).pipe(Effect.provide(owned)))
      )
      const forged = yield* run(request(freshSession(), forger(tag, 4), { stdin: "" })).pipe(Effect.provide(owned))
      expect(forged.stdout.text).toBe("forged 0 wrappers 0\n")
      for (const each of victims) {
        const result = yield* Fiber.join(each)
        expect(result.exitCode).toBe(5)
        expect(result.stdout.text).toBe("started\nstill running\n")
      }
    }))

  it.live("a served command cannot forge another served call's result, nor end its output, in its session", () =>
    Effect.gen(function*() {
      const session = freshSession()
      const victim = yield* Effect.fork(run(request(session, "echo started; sleep 2; exit 5")).pipe(Effect.provide(owned)))
      // The victim's leader's stdout and stderr (a process of the same user) get lines in the
      // wrapper's form, under every token the forger can think of.
      const forger = `for c in /proc/[0-9]*/cmdline; do tr '\\0' ' ' <$c 2>/dev/null | grep -q 'sleep 2; exit [5]' || continue; ` +
        `p=\${c%/cmdline}; for t in aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa ffffffffffffffffffffffffffffffff; do ` +
        `printf '\\0%s exit 0 empty 1 2\\n\\0%s end 1 2\\n' $t $t >$p/fd/1 && printf '\\0%s end 1 2\\n' $t >$p/fd/2 && n=$((n+1)); done; done; ` +
        `echo forged \${n:-0}`
      let forged = ""
      while (!/forged [1-9]/.test(forged)) {
        forged = (yield* run(request(session, forger)).pipe(Effect.provide(owned))).stdout.text
      }
      const result = yield* Fiber.join(victim)
      // It ran to its end: what the forger wrote is output.
      expect(result.exitCode).toBe(5)
      expect(result.stdout.text.startsWith("started\n")).toBe(true)
      expect(result.stdout.text).toContain("ffffffffffffffffffffffffffffffff end 1 2")
    }))

  it.live("a workspace that holds the host's temporary directory, where the network relays are, is refused", () =>
    Effect.gen(function*() {
      const build = (settings: DockerBashExecutor.Settings.Input) => Effect.exit(Effect.scoped(Layer.build(DockerBashExecutor.layer(settings))))
      const exit = yield* build({ image: testImage, cwd: os.tmpdir() })
      expect(Exit.isFailure(exit) && JSON.stringify(exit.cause)).toContain("holds the host's temporary directory")
      const parent = freshDir("parent")
      fs.mkdirSync(path.join(parent, "tmp"))
      const nested = yield* withHostEnv({ TMPDIR: path.join(parent, "tmp") })(build({ image: testImage, workspaceRoot: parent }))
      expect(Exit.isFailure(nested) && JSON.stringify(nested.cause)).toContain("bash-container: workspaceRoot is")
    }))

  it.live.skipIf(gccMissing)("under network none a host unix socket in the workspace is out of reach; socketpair works; bridge reaches it", () =>
    Effect.acquireUseRelease(
      Effect.async<net.Server>((resume) => {
        const socketPath = path.join(workspace, `service-${process.pid}.sock`)
        const server = net.createServer((socket) => socket.end("reached-host\n"))
        server.listen(socketPath, () => {
          fs.chmodSync(socketPath, 0o777)
          resume(Effect.succeed(server))
        })
      }),
      (server) =>
        Effect.gen(function*() {
          const command = `./box-probe unix ${server.address() as string}; ./box-probe pair`
          const blocked = yield* run(request(freshSession(), command)).pipe(Effect.provide(owned))
          expect(blocked.stdout.text).toBe("EPERM\npair\n")
          const bridged = ManagedRuntime.make(layer({ network: "bridge" }))
          try {
            const allowed = yield* run(request(freshSession(), command)).pipe(Effect.provide(bridged))
            expect(allowed.stdout.text).toBe("reached-host\npair\n")
          } finally {
            yield* Effect.promise(() => bridged.dispose())
          }
        }),
      (server) => Effect.async<void>((resume) => void server.close(() => resume(Effect.void)))
    ))

  it.live.skipIf(gccMissing || process.arch !== "x64")("a system call through the 32-bit ABI, which a filter could not read, ends the process", () =>
    Effect.gen(function*() {
      const result = yield* run(request(freshSession(), "./box-probe i386; echo $?")).pipe(Effect.provide(owned))
      // 128 + SIGSYS.
      expect(result.stdout.text).toBe("159\n")
    }))
})
