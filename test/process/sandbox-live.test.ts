/**
 * The sandboxing executor and local containment against real processes on bubblewrap. Survivors are
 * read from /proc here, never by the code under test.
 */
import { describe, expect, it } from "@effect/vitest"
import { afterAll } from "vitest"
import { execFileSync, spawn } from "node:child_process"
import { once } from "node:events"
import * as fs from "node:fs"
import * as net from "node:net"
import * as os from "node:os"
import * as path from "node:path"
import { Chunk, Context, Effect, Exit, Layer, Scope, Stream } from "effect"
import * as ApprovalScripted from "../../src/testing/ApprovalScripted.js"
import * as LocalBashExecutor from "../../src/layers/LocalBashExecutor.js"
import * as SandboxBashExecutor from "../../src/layers/SandboxBashExecutor.js"
import { BashExecutor, sandboxUnavailableText } from "../../src/services/BashExecutor.js"
import { escalationHint } from "../../src/tool/sandboxNotices.js"
import { bwrapUsable } from "../support/bwrap.js"
import { tempDirs } from "../support/tempDirs.js"
import { commandLineOf, liveProcesses } from "../support/processes.js"
import { composeWith, textOf, withTasks } from "../support/tools.js"
import { spawnPathFor } from "../support/spawnPath.js"


const graceMs = 1_000
const tmp = fs.realpathSync(os.tmpdir())
/** bubblewrap's binary, as `PATH` finds it. */
const bwrapBinary = () => execFileSync("sh", ["-c", "command -v bwrap"], { encoding: "utf8" }).trim()
const isRoot = process.getuid?.() === 0
const dirs = tempDirs("effect-bash-sandbox")
const freshDir = dirs.fresh
afterAll(dirs.removeAll)
/** Directories outside /tmp, which is private under workspace-write. */
const varTmp = tempDirs("effect-bash-sandbox", "/var/tmp")
afterAll(varTmp.removeAll)

const sandbox = (config: SandboxBashExecutor.Settings.Input = {}) =>
  SandboxBashExecutor.layer({ graceMs, ...config })

const run = (request: BashExecutor.Request) =>
  Effect.gen(function*() {
    const bash = yield* BashExecutor
    return yield* bash.run(yield* bash.resolve(request))
  })

/** Live processes whose command line contains `marker` (from /proc), as `<pid> <command line>`. */
const withMarker = (marker: string): ReadonlyArray<string> =>
  liveProcesses()
    .map((row) => `${row.pid} ${commandLineOf(row.pid)}`)
    .filter((line) => line.includes(marker))

let markers = 0
/** A `sleep` duration nobody else uses, to find its process by its command line. */
const uniqueSleep = () => `${8_000 + (process.pid % 1_000)}.${++markers}${Date.now() % 100_000}`

/** Commands that try to outlive their call. */
const escapes = (seconds: string) => [
  `setsid sleep ${seconds} &`,
  `nohup sleep ${seconds} >/dev/null 2>&1 &`,
  `( (sleep ${seconds} &) & )`,
  `set -m; sleep ${seconds} &`,
  `(timeout 60 sleep ${seconds} | tail -5) &`
].join("\n")

describe.skipIf(!bwrapUsable)("SandboxBashExecutor with real processes", () => {
  it.live("read-only: a write is denied with the runner's text; a failure that is handled is no denial", () =>
    Effect.gen(function*() {
      const workdir = freshDir("ro")
      const denied = yield* run({ command: "echo hi > file.txt", workdir })
      expect(denied).toMatchObject({
        exitCode: 1,
        stderr: { text: "bash: line 1: file.txt: Read-only file system\n" },
        sandbox: { mode: "read-only", denied: true, enforcement: "full" }
      })
      expect(fs.existsSync(path.join(workdir, "file.txt"))).toBe(false)
      const handled = yield* run({ command: "echo hi > file.txt; echo rc=$?", workdir })
      expect(handled).toMatchObject({ exitCode: 0, stdout: { text: "rc=1\n" }, sandbox: { denied: false } })
      const devNull = yield* run({ command: "echo hi > /dev/null && echo devnull-ok", workdir })
      expect(devNull.stdout.text).toBe("devnull-ok\n")
    }).pipe(Effect.provide(sandbox())))

  it.live("live output through the sandbox: the denial streams and is still judged", () =>
    Effect.scoped(Effect.gen(function*() {
      const bash = yield* BashExecutor
      const live = yield* bash.runStreaming(yield* bash.resolve({ command: "echo hi > file.txt", workdir: freshDir("live") }))
      const chunks = Chunk.toReadonlyArray(yield* Stream.runCollect(live.output))
      const stderr = chunks.map((item) =>
        item._tag === "OutputChunk" && item.stream === "stderr" ? new TextDecoder().decode(item.bytes) : ""
      ).join("")
      expect(stderr).toBe("bash: line 1: file.txt: Read-only file system\n")
      expect(yield* live.result).toMatchObject({ exitCode: 1, sandbox: { mode: "read-only", denied: true } })
    })).pipe(Effect.provide(sandbox())))

  it.live("workspace-write: the root is writable, elsewhere is not, and /tmp is private", () =>
    Effect.gen(function*() {
      const root = freshDir("ww")
      // Outside both the root and /tmp (which is private here).
      const other = varTmp.fresh("ww-other")
      const hostTmp = path.join(tmp, `effect-bash-host-visible-${process.pid}`)
      fs.writeFileSync(hostTmp, "host")
      const inside = `/tmp/effect-bash-private-${process.pid}`
      const result = yield* run({
        command: `echo in > inside.txt && echo tmp > ${inside} && cat ${inside} && ls ${hostTmp}; echo out > ${other}/x`,
        workdir: root,
        sandboxPolicy: { mode: "workspace-write", workspaceRoot: root }
      })
      expect(fs.readFileSync(path.join(root, "inside.txt"), "utf8")).toBe("in\n")
      expect(result.stdout.text).toBe("tmp\n")
      expect(result.stderr.text).toContain("No such file or directory")
      expect(result.stderr.text).toContain(`${other}/x: Read-only file system`)
      expect(result.sandbox).toEqual({ mode: "workspace-write", denied: true, enforcement: "full" })
      expect(fs.existsSync(inside)).toBe(false)
      expect(fs.existsSync(path.join(other, "x"))).toBe(false)
      fs.rmSync(hostTmp)
    }).pipe(Effect.provide(sandbox())))

  it.live("workspace-write with `/` as the root: /proc, /dev and the PID namespace stay the sandbox's", () =>
    Effect.gen(function*() {
      const workdir = freshDir("ww-slash")
      const result = yield* run({
        // One pid level in /proc's view of itself: the namespace's own /proc. The host's shows two
        // or more (the host's pid first), and lists every host process.
        command: "grep -c . <(ls /proc | grep -x '[0-9]*'); grep ^NSpid: /proc/self/status; ls /dev | wc -l",
        workdir,
        sandboxPolicy: { mode: "workspace-write", workspaceRoot: "/" }
      })
      const [processes, nspid, devices] = result.stdout.text.trim().split("\n")
      expect(nspid).toMatch(/^NSpid:\t\d+$/)
      expect(Number(processes)).toBeLessThan(10)
      expect(Number(devices)).toBeLessThan(20)
    }).pipe(Effect.provide(sandbox())))

  it.live("danger-full-access runs unconfined and still reports its mode", () =>
    Effect.gen(function*() {
      const workdir = freshDir("dfa")
      const result = yield* run({ command: "echo hi > file.txt && cat file.txt", workdir })
      expect(result).toMatchObject({ exitCode: 0, stdout: { text: "hi\n" } })
      expect(result.sandbox).toEqual({ mode: "danger-full-access", denied: false })
    }).pipe(Effect.provide(sandbox({ sandboxMode: "danger-full-access" }))))

  it.live("a TERM trap runs at the timeout: the runner stays up for the command's grace", () =>
    Effect.gen(function*() {
      const result = yield* run({ command: "trap 'echo got-term; exit 0' TERM; sleep 100 & wait", timeoutMs: 2_000 })
      expect(result).toMatchObject({ timedOut: true, exitCode: 0, stdout: { text: "got-term\n" } })
    }).pipe(Effect.provide(sandbox())))

  it.live("nothing escapes a call: setsid, nohup, double forks, set -m, timeout | tail", () =>
    Effect.gen(function*() {
      const seconds = uniqueSleep()
      const result = yield* run({ command: `${escapes(seconds)}\nsleep 0.3; echo started` })
      expect(result.stdout.text).toBe("started\n")
      expect(withMarker(seconds)).toEqual([])
    }).pipe(Effect.provide(sandbox())))

  it.live("nothing escapes a timeout, an abort, a background kill or disposal", () =>
    Effect.gen(function*() {
      const timedOut = uniqueSleep()
      yield* run({ command: `${escapes(timedOut)}\nsleep 100`, timeoutMs: 500 })
      expect(withMarker(timedOut)).toEqual([])

      const aborted = uniqueSleep()
      const controller = new AbortController()
      setTimeout(() => controller.abort(), 500)
      yield* run({ command: `${escapes(aborted)}\nsleep 100`, signal: controller.signal })
      expect(withMarker(aborted)).toEqual([])

      const killed = uniqueSleep()
      const scope = yield* Scope.make()
      const bash = Context.get(yield* Layer.buildWithScope(sandbox(), scope), BashExecutor)
      const handle = yield* bash.start(yield* bash.resolve({ command: `${escapes(killed)}\necho up; sleep 100` }))
      while (!(yield* handle.readOutput).delta.includes("up")) yield* Effect.sleep(10)
      expect(withMarker(killed).length).toBeGreaterThan(0)
      yield* handle.kill
      yield* handle.done
      expect(withMarker(killed)).toEqual([])

      const disposed = uniqueSleep()
      const other = yield* bash.start(yield* bash.resolve({ command: `${escapes(disposed)}\necho up; sleep 100` }))
      while (!(yield* other.readOutput).delta.includes("up")) yield* Effect.sleep(10)
      yield* Scope.close(scope, Exit.void)
      expect(withMarker(disposed)).toEqual([])
    }).pipe(Effect.provide(sandbox())))

  it.live("credential stores are hidden, even under workspace-write", () => {
    const home = freshDir("home")
    return Effect.gen(function*() {
      fs.mkdirSync(path.join(home, ".ssh"))
      fs.writeFileSync(path.join(home, ".ssh", "id_ed25519"), "PRIVATE-KEY")
      fs.writeFileSync(path.join(home, ".netrc"), "machine x password NETRC-SECRET")
      const command = `cat ${home}/.ssh/id_ed25519 ${home}/.netrc; ls -A ${home}/.ssh`
      for (const mode of ["read-only", "workspace-write"] as const) {
        const result = yield* run({ command, sandboxPolicy: { mode, workspaceRoot: home } })
        expect(result.stdout.text).toBe("")
        expect(result.stderr.text).not.toMatch(/PRIVATE-KEY|NETRC-SECRET/)
      }
      expect(fs.readFileSync(path.join(home, ".ssh", "id_ed25519"), "utf8")).toBe("PRIVATE-KEY")
    }).pipe(Effect.provide(sandbox({ home })))
  })

  it.live("a masked store stays hidden and in place whatever a command renames under workspace-write", () => {
    // The workspace contains the home, so the home itself, `.docker` and `.config` are all writable.
    const workspace = freshDir("mv-ws")
    const home = path.join(workspace, "home")
    return Effect.gen(function*() {
      fs.mkdirSync(path.join(home, ".docker"), { recursive: true })
      fs.writeFileSync(path.join(home, ".docker", "config.json"), "DOCKER-SECRET")
      fs.mkdirSync(path.join(home, ".config", "gh"), { recursive: true })
      fs.writeFileSync(path.join(home, ".config", "gh", "hosts.yml"), "GH-SECRET")
      const sandboxPolicy = { mode: "workspace-write" as const, workspaceRoot: workspace }
      const moved = yield* run({
        command: [
          "mv home/.docker home/.dockerx",
          "mv home/.config home/.configx",
          "mv home homex",
          "echo x > home/.config/other && echo writable"
        ].join("; "),
        workdir: workspace,
        sandboxPolicy
      })
      const read = yield* run({
        command: "cat homex/.dockerx/config.json homex/.configx/gh/hosts.yml home/.dockerx/config.json " +
          "home/.configx/gh/hosts.yml home/.docker/config.json home/.config/gh/hosts.yml",
        workdir: workspace,
        sandboxPolicy
      })
      expect(read.stdout.text).toBe("")
      expect(read.stderr.text).not.toMatch(/DOCKER-SECRET|GH-SECRET/)
      expect(moved.stdout.text).toBe("writable\n")
      expect(fs.readdirSync(workspace)).toEqual(["home"])
      expect(fs.readdirSync(home).sort()).toEqual([".config", ".docker"])
      expect(fs.readFileSync(path.join(home, ".docker", "config.json"), "utf8")).toBe("DOCKER-SECRET")
      expect(fs.readFileSync(path.join(home, ".config", "gh", "hosts.yml"), "utf8")).toBe("GH-SECRET")
      expect(fs.readFileSync(path.join(home, ".config", "other"), "utf8")).toBe("x\n")
    }).pipe(Effect.provide(sandbox({ home })))
  })

  it.live("a pinned directory replaced by a link as bubblewrap starts is refused, not bound", () => {
    // What a command running in the same root can do at any moment; this runner does it just before
    // bubblewrap starts, after the sandbox has chosen its mounts. A relative link resolves alike
    // outside the box and inside it, where bubblewrap looks for the mount's destination.
    const home = freshDir("pin-swap")
    const victim = varTmp.fresh("pin-victim")
    const runner = path.join(freshDir("pin-runner"), "bwrap")
    fs.writeFileSync(
      runner,
      // Only for a call that binds the pinned directory (not the probe).
      `#!/bin/sh\ncase "$*" in *"/.docker "*) mv ${home}/.docker ${home}/.docker-moved; ln -s ${path.relative(home, victim)} ${home}/.docker;; esac\n` +
        `exec ${bwrapBinary()} "$@"\n`,
      { mode: 0o755 }
    )
    return Effect.gen(function*() {
      fs.mkdirSync(path.join(home, ".docker"))
      fs.writeFileSync(path.join(home, ".docker", "config.json"), "DOCKER-SECRET")
      const error = yield* Effect.flip(run({
        command: `echo owned > ${victim}/owned`,
        sandboxPolicy: { mode: "workspace-write", workspaceRoot: home }
      }))
      expect(error).toMatchObject({ _tag: "SandboxUnavailableError", runnerFailure: expect.stringMatching(/^bwrap: /) })
      expect(fs.readdirSync(victim)).toEqual([])
    }).pipe(Effect.provide(sandbox({ home, bwrapPath: runner })))
  })

  it.live("bubblewrap is found on PATH once, as the layer starts: a confined command cannot plant its own", () => {
    const root = freshDir("path-plant")
    const victim = varTmp.fresh("path-victim")
    const hostPath = process.env.PATH
    const plant = `mkdir bin && printf '#!/bin/sh\\necho ran > ${victim}/ran\\n' > bin/bwrap && chmod +x bin/bwrap`
    const sandboxPolicy = { mode: "workspace-write" as const, workspaceRoot: root }
    return Effect.gen(function*() {
      expect((yield* run({ command: plant, workdir: root, sandboxPolicy })).exitCode).toBe(0)
      expect((yield* run({ command: "true", workdir: root, sandboxPolicy })).exitCode).toBe(0)
      expect(fs.readdirSync(victim)).toEqual([])
    }).pipe(
      Effect.provide(sandbox()),
      // A PATH whose first directory is inside the writable root, as the layer starts and after.
      (effect) => Effect.zipRight(Effect.sync(() => (process.env.PATH = `${root}/bin:${hostPath}`)), effect),
      Effect.ensuring(Effect.sync(() => (process.env.PATH = hostPath)))
    )
  })

  it.live("the host's environment is not readable through /proc", () =>
    Effect.gen(function*() {
      const name = "EFFECT_BASH_SANDBOX_TEST_SECRET_TOKEN"
      process.env[name] = "s3cr3t-value"
      try {
        const result = yield* run({
          command: `cat /proc/$PPID/environ /proc/1/environ | tr '\\0' '\\n' | grep -c s3cr3t-value; cat /proc/${process.pid}/environ`
        })
        expect(result.stdout.text).toBe("0\n")
        expect(result.stderr.text).toContain(`/proc/${process.pid}/environ: No such file or directory`)
      } finally {
        delete process.env[name]
      }
    }).pipe(Effect.provide(sandbox())))

  it.live("network none blocks a loopback connection to a server outside; host allows it", () =>
    Effect.acquireUseRelease(
      Effect.async<net.Server>((resume) => {
        const server = net.createServer((socket) => socket.end())
        server.listen(0, "127.0.0.1", () => resume(Effect.succeed(server)))
      }),
      (server) =>
        Effect.gen(function*() {
          const port = (server.address() as net.AddressInfo).port
          const command = `exec 3<>/dev/tcp/127.0.0.1/${port} && echo connected`
          const blocked = yield* run({ command }).pipe(Effect.provide(sandbox({ network: "none" })))
          expect(blocked.stdout.text).toBe("")
          expect(blocked.exitCode).not.toBe(0)
          const allowed = yield* run({ command }).pipe(Effect.provide(sandbox()))
          expect(allowed.stdout.text).toBe("connected\n")
        }),
      (server) => Effect.async<void>((resume) => void server.close(() => resume(Effect.void)))
    ))

  it.live("network none blocks a unix socket on a path; allowUnixSockets and host allow it; socketpair works", () =>
    Effect.acquireUseRelease(
      Effect.async<net.Server>((resume) => {
        const server = net.createServer((socket) => socket.end("reached-host\n"))
        server.listen(path.join(freshDir("unix"), "service.sock"), () => resume(Effect.succeed(server)))
      }),
      (server) =>
        Effect.gen(function*() {
          const script = `require("net").connect(${JSON.stringify(server.address())})` +
            `.on("data", (d) => process.stdout.write(d)).on("error", (e) => console.log(e.code))`
          // Node reads a child's output through a socketpair (libuv's stdio pipes).
          const pair = `process.stdout.write(require("child_process").execFileSync("echo", ["pair"]))`
          const node = JSON.stringify(process.execPath)
          const command = `${node} -e ${JSON.stringify(script)}; ${node} -e ${JSON.stringify(pair)}`
          const blocked = yield* run({ command }).pipe(Effect.provide(sandbox({ network: "none" })))
          expect(blocked.stdout.text).toBe("EPERM\npair\n")
          const written = yield* run({ command, sandboxPolicy: { mode: "workspace-write", workspaceRoot: freshDir("unix-ww") } })
            .pipe(Effect.provide(sandbox({ network: "none" })))
          expect(written.stdout.text).toBe("EPERM\npair\n")
          for (const config of [{ network: "none", allowUnixSockets: true }, { network: "host" }] as const) {
            const allowed = yield* run({ command }).pipe(Effect.provide(sandbox(config)))
            expect({ config, stdout: allowed.stdout.text }).toEqual({ config, stdout: "reached-host\npair\n" })
          }
        }),
      (server) => Effect.async<void>((resume) => void server.close(() => resume(Effect.void)))
    ))

  it.live("the seccomp descriptor is closed before the command runs", () =>
    Effect.gen(function*() {
      const result = yield* run({ command: "readlink /proc/$$/fd/4 || echo closed" })
        .pipe(Effect.provide(sandbox({ network: "none" })))
      expect(result.stdout.text).toBe("closed\n")
    }))

  it.live.skipIf(!isRoot)("no capability inside, as root or not: no remount writable, no unmount of a mask", () =>
    Effect.gen(function*() {
      // An unprivileged host: bubblewrap started as nobody, as a user's own bwrap would be.
      const unprivileged = path.join(freshDir("runners"), "bwrap-as-nobody")
      fs.writeFileSync(
        unprivileged,
        `#!/bin/sh\nexec setpriv --reuid=65534 --regid=65534 --clear-groups ${bwrapBinary()} "$@"\n`,
        { mode: 0o755 }
      )
      for (const [runAs, bwrapPath] of [["root", bwrapBinary()], ["nobody", unprivileged]] as const) {
        const home = freshDir(`caps-home-${runAs}`)
        const elsewhere = freshDir(`caps-elsewhere-${runAs}`)
        fs.mkdirSync(path.join(home, ".ssh"))
        fs.writeFileSync(path.join(home, ".ssh", "id_ed25519"), "PRIVATE-KEY")
        const target = path.join(elsewhere, "host-file")
        fs.writeFileSync(target, "host\n")
        for (const dir of [home, elsewhere, path.join(home, ".ssh")]) fs.chmodSync(dir, 0o755)
        // Writable by nobody too: only the read-only mount may stop the write.
        fs.chmodSync(target, 0o666)
        const result = yield* run({
          command: [
            "grep ^CapEff: /proc/self/status",
            "mount -o remount,bind,rw / 2>/dev/null; echo remount=$?",
            `echo X > ${target} 2>/dev/null; echo write=$?`,
            `umount ${home}/.ssh 2>/dev/null; echo umount=$?`,
            `cat ${home}/.ssh/id_ed25519 2>/dev/null; echo`
          ].join("\n"),
          workdir: "/"
        }).pipe(Effect.provide(sandbox({ home, bwrapPath })))
        const [capEff, remount, write, umount, key] = result.stdout.text.split("\n")
        expect({ runAs, hostFile: fs.readFileSync(target, "utf8"), key }).toEqual({ runAs, hostFile: "host\n", key: "" })
        expect({ runAs, remount, write, umount }).toEqual({ runAs, remount: "remount=32", write: "write=1", umount: "umount=32" })
        expect({ runAs, capEff }).toEqual({ runAs, capEff: "CapEff:\t0000000000000000" })
      }
    }))

  it.live("a missing runner fails closed and runs nothing", () =>
    Effect.gen(function*() {
      const marker = path.join(freshDir("missing"), "ran")
      const error = yield* Effect.flip(run({ command: `touch ${marker}` }))
      expect(error).toMatchObject({ _tag: "SandboxUnavailableError", code: "SANDBOX_UNAVAILABLE" })
      expect(error.message).toBe(sandboxUnavailableText("read-only"))
      expect(fs.existsSync(marker)).toBe(false)
    }).pipe(Effect.provide(sandbox({ bwrapPath: "/nonexistent/bwrap" }))))
})

describe.skipIf(!bwrapUsable)("the bash tool over the sandbox", () => {
  const tools = (approval: ReadonlyArray<"allowed-once">, workdir: string) =>
    composeWith({ executor: sandbox({ cwd: workdir }).pipe(Layer.orDie), services: withTasks(ApprovalScripted.layer(approval)) })

  it.live("renders the reference's denial text exactly", () => {
    const workdir = freshDir("tool")
    return Effect.gen(function*() {
      expect(yield* textOf("bash", { command: "echo hi > file.txt", description: "Write a file here" })).toBe(
        "[stderr]\nbash: line 1: file.txt: Read-only file system\n" +
          "[sandbox: file access denied under read-only mode]\n" +
          "[sandbox: escalation available — retry this exact command once with sandbox_permissions (the narrowest wider mode that suffices) + justification; the approval prompt asks the user]\n" +
          "[exit code: 1]"
      )
      expect(escalationHint).toContain("escalation available")
    }).pipe(Effect.provide(tools([], workdir)))
  })

  it.live("escalation end to end: denied, approved once, runs wider once", () => {
    const workdir = freshDir("esc")
    const session = { id: "s-sandbox", cwd: workdir }
    const write = { command: "echo hi >> file.txt", description: "Append to a file here" }
    return Effect.gen(function*() {
      expect(yield* textOf("bash", write, { session })).toContain("[sandbox: file access denied under read-only mode]")
      const retry = { ...write, sandbox_permissions: "workspace-write", justification: "The task asks for this file." }
      expect(yield* textOf("bash", retry, { session })).toBe("(no output)")
      expect((yield* (yield* ApprovalScripted.ApprovalScripted).requests).map((request) => request.mode)).toEqual(["workspace-write"])
      expect(yield* textOf("bash", write, { session })).toContain("[sandbox: file access denied under read-only mode]")
      expect(fs.readFileSync(path.join(workdir, "file.txt"), "utf8")).toBe("hi\n")
    }).pipe(Effect.provide(tools(["allowed-once"], workdir)))
  })
})

describe.skipIf(!bwrapUsable)("the writable roots of one sandbox", () => {
  const writeIn = (root: string) =>
    run({ command: "echo x > mark", workdir: root, sandboxPolicy: { mode: "workspace-write", workspaceRoot: root } })
  const refusal = (root: string) =>
    Effect.map(Effect.flip(writeIn(root)), (error) => ({ _tag: error._tag, field: "field" in error ? error.field : undefined, message: error.message }))

  it.live("never nest, in either order; the same directory and siblings are granted", () =>
    Effect.gen(function*() {
      const parent = freshDir("roots")
      const a = path.join(parent, "a")
      const b = path.join(parent, "b")
      fs.mkdirSync(path.join(a, "sub"), { recursive: true })
      fs.mkdirSync(b)
      expect((yield* writeIn(a)).exitCode).toBe(0)
      expect((yield* writeIn(a)).exitCode).toBe(0)
      expect((yield* writeIn(b)).exitCode).toBe(0)
      expect(yield* refusal(path.join(a, "sub"))).toEqual({
        _tag: "BashRequestError",
        field: "workspaceRoot",
        message: `workspace-write: "${a}/sub" lies inside "${a}", which this sandbox has made writable to another call: a command there could replace it with a link. The harness sets session directories: confined sessions need the same directory or sibling ones.`
      })
      expect(yield* refusal(parent)).toEqual({
        _tag: "BashRequestError",
        field: "workspaceRoot",
        message: `workspace-write: "${parent}" holds "${a}", which this sandbox has made writable to another call: a command here could replace it with a link. The harness sets session directories: confined sessions need the same directory or sibling ones.`
      })
      expect(fs.existsSync(path.join(a, "sub", "mark"))).toBe(false)
      expect(fs.existsSync(path.join(parent, "mark"))).toBe(false)
    }).pipe(Effect.provide(sandbox())))

  it.live("a root reached through a link inside a granted root is refused, however it is reached; a link elsewhere is followed", () =>
    Effect.gen(function*() {
      const parent = freshDir("links")
      const granted = path.join(parent, "granted")
      const elsewhere = path.join(parent, "elsewhere")
      fs.mkdirSync(granted)
      fs.mkdirSync(path.join(elsewhere, "real"), { recursive: true })
      fs.symlinkSync(path.join(elsewhere, "real"), path.join(parent, "alias"))
      expect((yield* writeIn(granted)).exitCode).toBe(0)
      expect((yield* writeIn(path.join(parent, "alias"))).exitCode).toBe(0)
      expect(fs.existsSync(path.join(elsewhere, "real", "mark"))).toBe(true)

      const target = varTmp.fresh("link-target")
      fs.symlinkSync(target, path.join(granted, "planted"))
      fs.symlinkSync(path.join(granted, "planted"), path.join(parent, "chained"))
      for (const root of [path.join(granted, "planted"), path.join(parent, "chained")]) {
        expect(yield* refusal(root)).toEqual({
          _tag: "BashRequestError",
          field: "workspaceRoot",
          message: `workspace-write: "${root}" is reached through the link "${granted}/planted", inside "${granted}", which this sandbox has made writable: a confined command may have made that link. The harness sets session directories: confined sessions need the same directory or sibling ones.`
        })
      }
      expect(fs.readdirSync(target)).toEqual([])
    }).pipe(Effect.provide(sandbox())))
})

describe.skipIf(!bwrapUsable)("sessions of the bash tool over one sandbox", () => {
  it.live("one session's command cannot make another session's directory lead out of its own", () => {
    const parent = freshDir("sessions")
    const first = { id: "first", cwd: path.join(parent, "first") }
    // A directory a hostile command wants writable: outside every session, and outside /tmp (which
    // is private in the box).
    const victim = varTmp.fresh("victim")
    fs.mkdirSync(first.cwd)
    const plant = { command: `ln -s ${victim} next-session`, description: "Plant a link" }
    const write = { command: "echo owned > owned.txt", description: "Write a file here" }
    return Effect.gen(function*() {
      expect(yield* textOf("bash", plant, { session: first })).toBe("(no output)")
      const second = { id: "second", cwd: path.join(first.cwd, "next-session") }
      const text = yield* textOf("bash", write, { session: second })
      expect(text).toContain("is reached through the link")
      expect(fs.readdirSync(victim)).toEqual([])
    }).pipe(Effect.provide(composeWith({
      executor: sandbox({ cwd: parent, sandboxMode: "workspace-write" }).pipe(Layer.orDie),
      services: withTasks(ApprovalScripted.layer([]))
    })))
  })
})

describe.skipIf(!bwrapUsable)("LocalBashExecutor contain", () => {
  it.live("nothing escapes, and files are not confined", () =>
    Effect.gen(function*() {
      const workdir = freshDir("contain")
      const seconds = uniqueSleep()
      const result = yield* run({ command: `${escapes(seconds)}\necho hi > file.txt; sleep 0.3; cat file.txt`, workdir })
      expect(result).toMatchObject({ exitCode: 0, stdout: { text: "hi\n" } })
      expect(result.sandbox).toBeUndefined()
      expect(withMarker(seconds)).toEqual([])
    }).pipe(Effect.provide(LocalBashExecutor.layer({ graceMs, contain: true }))))

  it.live.skipIf(!isRoot)("no capability inside, even for a root host", () =>
    Effect.gen(function*() {
      const result = yield* run({ command: "grep ^CapEff: /proc/self/status" })
      expect(result.stdout.text).toBe("CapEff:\t0000000000000000\n")
    }).pipe(Effect.provide(LocalBashExecutor.layer({ graceMs, contain: true }))))

  it.live("a missing runner fails the layer's build with a clear message", () =>
    Effect.gen(function*() {
      const exit = yield* Effect.exit(Layer.build(LocalBashExecutor.layer({ contain: true, bwrapPath: "/nonexistent/bwrap" })).pipe(Effect.scoped))
      expect(exit).toMatchObject({ _tag: "Failure" })
      const error = Exit.isFailure(exit) ? JSON.stringify(exit.cause) : ""
      expect(error).toContain("bash-local: contain needs bubblewrap, but \\\"/nonexistent/bwrap\\\" cannot start")
    }))
})

describe.skipIf(!bwrapUsable)("the spawns of a confining layer", () => {
  /** A call that runs unconfined in any layer. */
  const unconfined = { sandboxPolicy: { mode: "danger-full-access", workspaceRoot: tmp } } as const

  it.live("are posix_spawn's: bubblewrap, with its input descriptor or without, and an unconfined call", () =>
    Effect.gen(function*() {
      const spawned = (layer: Layer.Layer<BashExecutor, unknown>, request = {}) =>
        spawnPathFor(request).pipe(Effect.provide(layer))
      expect(yield* spawned(LocalBashExecutor.layer({ graceMs, contain: true }))).toBe("posix_spawn")
      expect(yield* spawned(sandbox())).toBe("posix_spawn")
      // No network: the seccomp filter reaches bubblewrap over a pipe of its own (what the filter
      // refuses: "network none blocks a unix socket on a path" above).
      expect(yield* spawned(sandbox({ network: "none" }))).toBe("posix_spawn")
      expect(yield* spawned(sandbox(), unconfined)).toBe("posix_spawn")
    }))
})

describe.skipIf(!bwrapUsable)("a SIGKILLed host", () => {
  it.live("takes every sandboxed process with it, escapees included", () =>
    Effect.gen(function*() {
      const seconds = uniqueSleep()
      const fixture = path.join(import.meta.dirname, "..", "support", "fixtures", "sandbox-host.mjs")
      const host = spawn(process.execPath, [fixture, seconds], { stdio: ["ignore", "pipe", "inherit"] })
      yield* Effect.promise(() => once(host.stdout!, "data"))
      expect(withMarker(seconds).length).toBeGreaterThanOrEqual(4)
      host.kill("SIGKILL")
      yield* Effect.promise(() => once(host, "exit"))
      // The kernel delivers the parent-death signals asynchronously: poll, bounded.
      for (let attempt = 0; attempt < 200 && withMarker(seconds).length > 0; attempt++) yield* Effect.sleep(10)
      expect(withMarker(seconds)).toEqual([])
    }))
})
