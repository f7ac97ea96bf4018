/**
 * The same terminal behaviour under each executor a terminal can run in — on the host (local), in
 * bubblewrap's PID namespace (contained local), confined in bubblewrap (sandbox), and in a session's
 * box on a Docker Engine (container; with EFFECT_BASH_TEST_REMOTE_ENGINE, also on an engine that
 * shares no file system) — with real programs: shell state across sends, a `read -p` prompt answered,
 * a job interrupted by `terminal_signal`, a program that never returns, `setsid` children gone after
 * close, another owner refused; then each executor's own confinement. What runs where is read
 * independently: the host's /proc, or the box's through the docker CLI.
 */
import { afterAll, describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Schedule } from "effect"
import { execFileSync } from "node:child_process"
import * as NodeFs from "node:fs"
import * as Http from "node:http"
import type { AddressInfo } from "node:net"
import * as NodePath from "node:path"
import * as DockerBashExecutor from "../../src/layers/DockerBashExecutor.js"
import * as LocalBashExecutor from "../../src/layers/LocalBashExecutor.js"
import * as NodePtySpawner from "../../src/layers/NodePtySpawner.js"
import * as SandboxBashExecutor from "../../src/layers/SandboxBashExecutor.js"
import * as TerminalsLive from "../../src/layers/TerminalsLive.js"
import { type BashExecutor, sandboxUnavailableText } from "../../src/services/BashExecutor.js"
import { PtySpawner } from "../../src/services/PtySpawner.js"
import { Terminals } from "../../src/services/Terminals.js"
import { bwrapUsable, socatUsable } from "../support/bwrap.js"
import { dockerUnavailable, testImage } from "../support/docker.js"
import { commandLineOf, isAlive, processTable } from "../support/processes.js"
import { tempDirs } from "../support/tempDirs.js"

const dirs = tempDirs("term-exec")
// Outside /tmp, which a workspace-write sandbox replaces with its own: a host directory it sees read-only.
const hostDirs = tempDirs("term-exec", NodeFs.realpathSync("/var/tmp"))
afterAll(() => {
  dirs.removeAll()
  hostDirs.removeAll()
})

// Unique to this run: a container row's box is found by its session label on a shared engine.
const owner = `session-a-${process.pid}`

const send = (id: string, text: string, submit = true) =>
  Effect.flatMap(Terminals, (terminals) => terminals.send(owner, id, { text, submit }))

const until = (check: () => boolean, what: string | (() => string)) =>
  Effect.retry(
    Effect.suspend(() => check() ? Effect.void : Effect.fail(typeof what === "string" ? what : what())),
    Schedule.intersect(Schedule.spaced("20 millis"), Schedule.recurs(250))
  )

/** One live process where a terminal runs: its pid there, its terminal's foreground group, its command line. */
interface Row {
  readonly pid: number
  readonly tpgid: number
  readonly args: string
}

/** Where a placement's processes are, read independently of the code under test. */
interface View {
  /** The live processes there now (zombies left out). */
  readonly processes: () => ReadonlyArray<Row>
  /** A file's text there. */
  readonly readFile: (path: string) => string
  /** The command that starts a program in a new session there. */
  readonly setsid: string
}

const hostView: View = {
  processes: () =>
    processTable().filter((row) => row.state !== "Z").map((row) => {
      let tpgid = -1
      try {
        const stat = NodeFs.readFileSync(`/proc/${row.pid}/stat`, "latin1")
        tpgid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[5])
      } catch {
        // Gone meanwhile.
      }
      return { pid: row.pid, tpgid, args: commandLineOf(row.pid) }
    }),
  readFile: (path) => NodeFs.readFileSync(path, "utf8"),
  setsid: "setsid"
}

const docker = (host: string | undefined, ...args: ReadonlyArray<string>): string =>
  execFileSync("docker", [...(host === undefined ? [] : ["-H", host]), ...args], { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] })

/** The box of `owner`'s session on the engine at `host` (the local one when absent). */
const boxOf = (host: string | undefined): string => {
  const [box, ...more] = docker(host, "ps", "-q", "--no-trunc", "--filter", `label=effect-bash.session=${owner}`)
    .split("\n")
    .filter((line) => line !== "")
  if (box === undefined || more.length > 0) throw new Error(`expected one box of ${owner}, found ${[box, ...more].join(" ")}`)
  return box
}

/** The box's processes as its `ps` lists them, the listing's own left out. */
const boxView = (host: string | undefined): View => ({
  processes: () =>
    docker(host, "exec", boxOf(host), "ps", "-eo", "pid=,tpgid=,stat=,args=").split("\n").flatMap((line) => {
      const match = /^\s*(\d+)\s+(-?\d+)\s+(\S+)\s+(.*)$/.exec(line)
      if (match === null || match[3]!.startsWith("Z") || match[4]!.startsWith("ps -eo")) return []
      return [{ pid: Number(match[1]), tpgid: Number(match[2]), args: match[4]!.trim() }]
    }),
  readFile: (path) => docker(host, "exec", boxOf(host), "cat", path),
  // The test image has no setsid: the host's is copied into the box (it needs only the C library).
  setsid: "/tmp/effect-bash-setsid"
})

/** Makes `view.setsid` available where the terminal runs. */
const provideSetsid = (placement: Placement) =>
  Effect.sync(() => {
    if (placement.engine === undefined) return
    const host = placement.engine === "local" ? undefined : placement.engine
    docker(host, "cp", execFileSync("sh", ["-c", "command -v setsid"], { encoding: "utf8" }).trim(), `${boxOf(host)}:/tmp/effect-bash-setsid`)
  })

/** An executor a terminal runs under, over a fresh workspace: its shell starts there. */
interface Placement {
  readonly name: string
  readonly enabled: boolean
  readonly executor: (workspace: string) => Layer.Layer<BashExecutor, unknown>
  readonly view: View
  /** The engine of a container row: the local one, or a remote one's address. */
  readonly engine?: string | undefined
}

const remote = process.env.EFFECT_BASH_TEST_REMOTE_ENGINE

const placements: ReadonlyArray<Placement> = [
  { name: "local", enabled: true, executor: (workspace) => LocalBashExecutor.layer({ cwd: workspace }), view: hostView },
  {
    name: "contained local",
    enabled: bwrapUsable,
    executor: (workspace) => LocalBashExecutor.layer({ cwd: workspace, contain: true }),
    view: hostView
  },
  {
    name: "sandbox",
    enabled: bwrapUsable,
    executor: (workspace) =>
      SandboxBashExecutor.layer({ cwd: workspace, sandboxMode: "workspace-write", workspaceRoot: workspace }),
    view: hostView
  },
  {
    name: "container",
    enabled: dockerUnavailable === undefined,
    executor: (workspace) => DockerBashExecutor.layer({ image: testImage, cwd: workspace }),
    view: boxView(undefined),
    engine: "local"
  },
  {
    name: "container on an engine that shares no file system",
    enabled: remote !== undefined,
    // The workspace is a volume at a path this host has and the engine does not.
    executor: (workspace) =>
      DockerBashExecutor.layer({ image: testImage, cwd: workspace, workspace: "volume", dockerHost: remote }),
    view: boxView(remote),
    engine: remote
  }
]

const terminalsIn = (placement: Placement, workspace: string, settings: TerminalsLive.Settings.Input = {}) =>
  TerminalsLive.layer({ idleSilenceMs: 1_500, closeGraceMs: 1_000, ...settings }).pipe(
    Layer.provide(Layer.merge(NodePtySpawner.layer, placement.executor(workspace))),
    Layer.orDie
  )

for (const placement of placements) {
  describe.skipIf(!placement.enabled)(`terminals under the ${placement.name} executor`, () => {
    const workspace = dirs.fresh(placement.name.replace(/\W+/g, "-"))
    const layer = (settings: TerminalsLive.Settings.Input = {}) => terminalsIn(placement, workspace, settings)
    const { view } = placement
    // The session's own box, under a container executor.
    const shell = Effect.flatMap(Terminals, (terminals) => terminals.open(owner, { type: "shell", dshEnv: { DSH_SESSION_ID: owner } }))
    const foregroundOf = (pid: number): number => view.processes().find((row) => row.pid === pid)?.tpgid ?? -1
    const commandOf = (pid: number): string => view.processes().find((row) => row.pid === pid)?.args ?? ""
    const running = (pattern: RegExp) => view.processes().filter((row) => pattern.test(row.args))

    it.live("cd and variables persist; the prompt settles each send as stdin_read", () =>
      Effect.gen(function*() {
        const dir = NodePath.join(workspace, `cd-${Math.random().toString(36).slice(2)}`)
        const opened = yield* shell
        expect(opened.startup).toContain("dsh> ")
        yield* send(opened.id, `mkdir -p ${dir} && cd ${dir} && export GREETING=hello`)
        const result = yield* send(opened.id, "echo \"$GREETING from $(pwd)\"")
        expect(result.wait).toBe("stdin_read")
        expect(result.status).toEqual({ kind: "running" })
        expect(result.output).toContain(`hello from ${dir}`)
      }).pipe(Effect.provide(layer())))

    it.live("the shell's terminal has the size asked for", () =>
      Effect.gen(function*() {
        const terminals = yield* Terminals
        const { id } = yield* terminals.open(owner, { type: "shell", rows: 33, cols: 99, dshEnv: { DSH_SESSION_ID: owner } })
        const result = yield* send(id, "echo \"size $LINES x $COLUMNS\"")
        expect(result.output).toContain("size 33 x 99")
      }).pipe(Effect.provide(layer())))

    it.live("a read -p prompt is answered by the next send", () =>
      Effect.gen(function*() {
        const { id } = yield* shell
        const asked = yield* send(id, "read -p 'name? ' NAME; echo \"got $NAME\"")
        expect(asked.wait).toBe("stdin_read")
        expect(asked.output).toContain("name? ")
        const done = yield* send(id, "ada")
        expect(done.output).toContain("got ada")
        expect(done.wait).toBe("stdin_read")
      }).pipe(Effect.provide(layer())))

    it.live("a program reading the terminal with no prompt is ready by its stdin wait", () =>
      Effect.gen(function*() {
        const { id } = yield* shell
        // No prompt marker and long before the silence bound: only the read of the PTY settles it.
        const started = yield* send(id, "cat")
        expect(started.wait).toBe("stdin_read")
        const echoed = yield* send(id, "typed")
        expect(echoed.output).toContain("typed\r\ntyped")
        expect(echoed.wait).toBe("stdin_read")
      }).pipe(Effect.provide(layer({ idleSilenceMs: 60_000 }))))

    it.live("terminal_signal interrupts the foreground job with a real SIGINT", () =>
      Effect.gen(function*() {
        const terminals = yield* Terminals
        const { id, pid } = yield* shell
        const sleeping = yield* send(id, "sleep 600", true).pipe(Effect.timeout("300 millis"), Effect.option)
        expect(sleeping._tag).toBe("None")
        // The interrupted send already sent SIGINT; once the shell has its terminal back (else the signal
        // below could reach the dying first sleep), start another to signal explicitly.
        yield* until(() => foregroundOf(pid) === pid, "the first sleep in the foreground")
        const operation = yield* terminals.startSend(owner, id, { text: "sleep 601" })
        // Signal once sleep itself holds the foreground (the shell's tpgid, its leader exec'd):
        // a signal to the forked child before its exec may not end the sleep it becomes.
        yield* until(() => commandOf(foregroundOf(pid)) === "sleep 601", "sleep not yet in the foreground")
        const { pgid } = yield* terminals.signal(owner, id, "SIGINT")
        expect(pgid).not.toBe(pid)
        const result = yield* operation.done
        // The job is gone: the shell has its terminal back and showed its prompt.
        expect(foregroundOf(pid)).toBe(pid)
        expect(running(/^sleep 601$/)).toEqual([])
        expect(result.output).toContain("dsh> ")
        expect(result.wait).toBe("stdin_read")
      }).pipe(Effect.provide(layer())))

    it.live("a cancelled send stops its command with a real SIGINT; the shell is ready for the next", () =>
      Effect.gen(function*() {
        const { id, pid } = yield* shell
        const cancelled = yield* send(id, "sleep 612").pipe(Effect.timeout("1 second"), Effect.option)
        expect(cancelled._tag).toBe("None")
        // The sleep is gone and the shell has its terminal back.
        yield* until(() => running(/^sleep 612$/).length === 0 && foregroundOf(pid) === pid, "running")
        const next = yield* send(id, "echo after")
        expect(next.output).toContain("after")
        expect(next.wait).toBe("stdin_read")
      }).pipe(Effect.provide(layer())))

    it.live("a program that never returns settles at the timeout, still running", () =>
      Effect.gen(function*() {
        const { id } = yield* shell
        const result = yield* send(id, "while :; do echo tick; sleep 0.2; done")
        expect(result.wait).toBe("timeout")
        expect(result.status).toEqual({ kind: "running" })
        expect(result.output).toContain("tick")
      }).pipe(Effect.provide(layer({ timeoutMs: 1_500 }))))

    it.live("setsid children that left the session are gone after close, where the shell ran and on the host", () =>
      Effect.gen(function*() {
        const terminals = yield* Terminals
        const { id, pid } = yield* shell
        yield* provideSetsid(placement)
        const started = yield* send(id, `${view.setsid} sleep 9137 & sleep 9138 & (sleep 9139 &); echo pids $!`)
        expect(started.output).toContain("pids")
        const sleeps = () => running(/^sleep 913[789]$/)
        // The prompt may come back before the background jobs have exec'd their sleeps.
        yield* until(
          () => sleeps().length === 3,
          () => `the three sleeps not yet started: ${JSON.stringify(started.output)}, ${JSON.stringify(view.processes())}`
        )
        expect(yield* terminals.close(owner, id)).toBe("closed")
        expect(sleeps()).toEqual([])
        expect(view.processes().filter((row) => row.pid === pid)).toEqual([])
        // Under a container nothing of the terminal is left in the box (its probe included), but the
        // box's own (its init and idle sleep, the executor's waiting wrappers and status watcher); nor on the host.
        if (placement.engine !== undefined) {
          const boxOwn = /docker-init|sleep infinity|effect-bash (?:serve|\/\.effect-bash-control)$/
          expect(view.processes().filter((row) => !boxOwn.test(row.args)).map((row) => row.args)).toEqual([])
        }
        expect(processTable().filter((row) => /^sleep 913[789]$/.test(commandLineOf(row.pid)) && isAlive(row.pid))).toEqual([])
        expect(yield* terminals.list(owner)).toEqual([])
      }).pipe(Effect.provide(layer())))

    it.live("close's TERM reaches a child that handles it before anything is killed", () =>
      Effect.gen(function*() {
        const terminals = yield* Terminals
        const { id } = yield* shell
        yield* provideSetsid(placement)
        const mark = NodePath.join(workspace, `termed-${id}`)
        const started = yield* send(
          id,
          `${view.setsid} bash -c 'trap "echo termed > ${mark}; exit 0" TERM; echo trapping; while :; do sleep 0.05; done' &`
        )
        expect(started.wait).toBe("stdin_read")
        yield* until(() => running(new RegExp(`echo termed > ${mark}`)).length > 0, "no trapping child")
        expect(yield* terminals.close(owner, id)).toBe("closed")
        expect(view.readFile(mark)).toBe("termed\n")
      }).pipe(Effect.provide(layer())))

    it.live("a terminal answers only its owner", () =>
      Effect.gen(function*() {
        const terminals = yield* Terminals
        const { id } = yield* shell
        const refused = yield* Effect.flip(terminals.send("session-b", id, { text: "echo hi" }))
        expect(refused.reason).toBe("foreign")
        expect(refused.message).toBe(`PTY session ${id} belongs to another agent`)
        expect(yield* Effect.flip(terminals.close("session-b", id))).toMatchObject({ reason: "foreign" })
        expect(yield* terminals.list("session-b")).toEqual([])
      }).pipe(Effect.provide(layer())))
  })
}

const netImage = "effect-bash-net-test:latest"
const netImagePresent = dockerUnavailable === undefined && (() => {
  try {
    docker(undefined, "image", "inspect", netImage)
    return true
  } catch {
    return false
  }
})()

describe.skipIf(dockerUnavailable !== undefined)("a container terminal's confinement", () => {
  const workspace = dirs.fresh("boxed")
  const container = placements.find((placement) => placement.name === "container")!

  it.live("the shell has the calls' environment: the managed variables over the box's own, nothing of the host's", () =>
    Effect.gen(function*() {
      process.env.EFFECT_BASH_TEST_HOST_ONLY = "host"
      const { id } = yield* Effect.flatMap(Terminals, (terminals) => terminals.open(owner, { type: "shell", dshEnv: { DSH_SESSION_ID: owner } }))
      const result = yield* send(id, "echo \"[${EFFECT_BASH_TEST_HOST_ONLY-unset}] [$DSH_SESSION_ID] [$DSH_PTY_SESSION_ID] [$PATH] [$TERM]\"")
      expect(result.output).toContain(`[unset] [${owner}] [${id}] [/usr/local/bin:/usr/bin:/bin] [xterm-256color]`)
    }).pipe(
      Effect.ensuring(Effect.sync(() => delete process.env.EFFECT_BASH_TEST_HOST_ONLY)),
      Effect.provide(terminalsIn(container, workspace))
    ))

  it.live("a probe killed in the box is started again: the prompt still settles sends, and close still leaves nothing", () =>
    Effect.gen(function*() {
      const terminals = yield* Terminals
      const { id } = yield* terminals.open(owner, { type: "shell", dshEnv: { DSH_SESSION_ID: owner } })
      const probes = () => container.view.processes().filter((row) => row.args.includes("effect-bash-terminal-probe"))
      expect(probes()).toHaveLength(1)
      const [first] = probes()
      const killed = yield* send(id, `kill -9 ${first!.pid}; echo killed`)
      expect(killed.output).toContain("killed")
      yield* send(id, "sleep 9151 &")
      // No silence settles within the test: only the prompt with the shell in the foreground, which the new probe says.
      const next = yield* send(id, "echo still here")
      expect(next.output).toContain("still here")
      expect(next.wait).toBe("stdin_read")
      expect(probes().map((row) => row.pid)).not.toContain(first!.pid)
      expect(yield* terminals.close(owner, id)).toBe("closed")
      expect(container.view.processes().filter((row) => row.args === "sleep 9151" || row.args.includes("effect-bash-terminal-probe"))).toEqual([])
    }).pipe(Effect.provide(terminalsIn(container, workspace, { idleSilenceMs: 60_000 }))))

  it.live.skipIf(!socatUsable || !netImagePresent)("an allow-listed network: the box's proxies admit only the list", () =>
    Effect.gen(function*() {
      const server = yield* Effect.acquireRelease(
        Effect.async<Http.Server>((resume) => {
          const created = Http.createServer((request, response) => response.end(`page of ${request.headers.host}\n`))
          created.listen(0, "127.0.0.1", () => resume(Effect.succeed(created)))
        }),
        (server) => Effect.async<void>((resume) => void server.close(() => resume(Effect.void)))
      )
      const port = (server.address() as AddressInfo).port
      const boxed = DockerBashExecutor.layer({
        image: netImage,
        cwd: workspace,
        network: { allow: ["allowed.test"], hosts: { "allowed.test": "127.0.0.1", "other.test": "127.0.0.1" } }
      })
      yield* Effect.gen(function*() {
        const { id } = yield* Effect.flatMap(Terminals, (terminals) => terminals.open(owner, { type: "shell", dshEnv: { DSH_SESSION_ID: owner } }))
        const curl = (host: string) => `curl -sS --max-time 10 http://${host}:${port}/`
        const allowed = yield* send(id, curl("allowed.test"))
        expect(allowed.output).toContain(`page of allowed.test:${port}`)
        const refused = yield* send(id, curl("other.test"))
        expect(refused.output).not.toContain("page of")
        expect(refused.output).toContain(`[network: refused other.test:${port} — not in the allow-list]`)
      }).pipe(Effect.provide(
        TerminalsLive.layer().pipe(Layer.provide(Layer.merge(NodePtySpawner.layer, boxed)), Layer.orDie)
      ))
    }).pipe(Effect.scoped))
})

describe.skipIf(!bwrapUsable)("a sandboxed terminal's confinement", () => {
  const workspace = dirs.fresh("confined")
  const sandbox = placements.find((placement) => placement.name === "sandbox")!

  it.live("a write outside the writable root is refused, one inside it lands, and the shell is in a PID namespace", () =>
    Effect.gen(function*() {
      const terminals = yield* Terminals
      const outside = hostDirs.fresh("outside")
      const { id } = yield* terminals.open(owner, { type: "shell" })
      const refused = yield* send(id, `echo x > ${outside}/escaped; echo "status $?"`)
      expect(refused.output).toMatch(/read-only file system/i)
      expect(refused.output).toContain("status 1")
      expect(NodeFs.existsSync(NodePath.join(outside, "escaped"))).toBe(false)
      yield* send(id, `echo inside > ${workspace}/landed`)
      expect(NodeFs.readFileSync(NodePath.join(workspace, "landed"), "utf8")).toBe("inside\n")
      // bubblewrap's init is pid 1 and the shell pid 2 of the terminal's own namespace.
      const pids = yield* send(id, "echo \"pid $$ parent $PPID\"")
      expect(pids.output).toContain("pid 2 parent 1")
    }).pipe(Effect.provide(terminalsIn(sandbox, workspace))))

  it.live("network none: the shell has only a loopback and the unix-socket filter bubblewrap read from its input", () =>
    Effect.gen(function*() {
      const { id } = yield* Effect.flatMap(Terminals, (terminals) => terminals.open(owner, { type: "shell" }))
      const result = yield* send(
        id,
        "echo \"nets: $(tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d ' ' | tr '\\n' ' ')\"; grep '^Seccomp:' /proc/self/status"
      )
      expect(result.output).toContain("nets: lo \r\n")
      expect(result.output).toMatch(/Seccomp:\s+2\r?\n/)
    }).pipe(Effect.provide(
      TerminalsLive.layer().pipe(
        Layer.provide(Layer.merge(NodePtySpawner.layer, SandboxBashExecutor.layer({ cwd: workspace, network: "none" }))),
        Layer.orDie
      )
    )))

  it.live.skipIf(!socatUsable)("an allow-listed network: the proxies live as long as the terminal, and admit only the list", () =>
    Effect.gen(function*() {
      const server = yield* Effect.acquireRelease(
        Effect.async<Http.Server>((resume) => {
          const created = Http.createServer((_request, response) => response.end(`page of ${_request.headers.host}\n`))
          created.listen(0, "127.0.0.1", () => resume(Effect.succeed(created)))
        }),
        (server) => Effect.async<void>((resume) => void server.close(() => resume(Effect.void)))
      )
      const port = (server.address() as AddressInfo).port
      const sandboxed = SandboxBashExecutor.layer({
        cwd: workspace,
        network: { allow: ["allowed.test"], hosts: { "allowed.test": "127.0.0.1", "other.test": "127.0.0.1" } }
      })
      yield* Effect.gen(function*() {
        const { id } = yield* Effect.flatMap(Terminals, (terminals) => terminals.open(owner, { type: "shell" }))
        const curl = (host: string) => `curl -sS --max-time 10 http://${host}:${port}/`
        const allowed = yield* send(id, curl("allowed.test"))
        expect(allowed.output).toContain(`page of allowed.test:${port}`)
        const refused = yield* send(id, curl("other.test"))
        expect(refused.output).not.toContain("page of")
        expect(refused.output).toContain(`[network: refused other.test:${port} — not in the allow-list]`)
      }).pipe(Effect.provide(
        TerminalsLive.layer().pipe(Layer.provide(Layer.merge(NodePtySpawner.layer, sandboxed)), Layer.orDie)
      ))
      // The layer is closed: no relay of the terminal's proxies is left.
      expect(processTable().filter((row) => commandLineOf(row.pid).startsWith("socat "))).toEqual([])
    }).pipe(Effect.scoped))

  it.live("a daemon that left the session and closed the terminal is gone after close: its PID namespace ended", () =>
    Effect.gen(function*() {
      const terminals = yield* Terminals
      const { id } = yield* terminals.open(owner, { type: "shell" })
      yield* send(id, "(setsid sh -c 'exec sleep 9141 </dev/null >/dev/null 2>&1' &)")
      const daemon = () => processTable().filter((row) => commandLineOf(row.pid) === "sleep 9141")
      yield* until(() => daemon().length === 1, "no daemon")
      const [row] = daemon()
      expect(row!.sid).toBe(row!.pid)
      expect(row!.tty).toBe(0)
      expect(yield* terminals.close(owner, id)).toBe("closed")
      expect(isAlive(row!.pid)).toBe(false)
    }).pipe(Effect.provide(terminalsIn(sandbox, workspace))))

  it.live("a runner that fails as it starts refuses the terminal with its first line", () =>
    Effect.gen(function*() {
      const terminals = yield* Terminals
      const refused = yield* Effect.flip(terminals.open(owner, { type: "shell" }))
      expect(refused.message).toMatch(
        /^the runner exited before the shell started: bwrap: Can't find source path \/var\/tmp\/term-exec-gone-\w+\/missing: No such file or directory$/
      )
    }).pipe(Effect.provide(
      TerminalsLive.layer().pipe(
        Layer.provide(Layer.merge(
          NodePtySpawner.layer,
          SandboxBashExecutor.layer({
            cwd: workspace,
            sandboxMode: "workspace-write",
            workspaceRoot: NodePath.join(hostDirs.fresh("gone"), "missing")
          })
        )),
        Layer.orDie
      )
    )))

  it.live("a sandbox whose runner cannot start refuses the terminal (fail closed)", () =>
    Effect.gen(function*() {
      const terminals = yield* Terminals
      const refused = yield* Effect.flip(terminals.open(owner, { type: "shell" }))
      expect(refused.reason).toBe("startup")
      expect(refused.message).toBe(sandboxUnavailableText("read-only"))
      expect(yield* terminals.list(owner)).toEqual([])
    }).pipe(Effect.provide(
      TerminalsLive.layer().pipe(
        Layer.provide(Layer.merge(
          NodePtySpawner.layer,
          SandboxBashExecutor.layer({ cwd: workspace, bwrapPath: "/nonexistent/bwrap", probeTimeoutMs: 5_000 })
        )),
        Layer.orDie
      )
    )))

  /** A shell spawned through a runner that is the given `sh` script, in a scope of its own. */
  const spawnUnderRunner = (script: string, pidNamespace: boolean) =>
    Effect.flatMap(PtySpawner, (spawner) =>
      spawner.spawn({
        file: "/bin/bash",
        args: [],
        cwd: workspace,
        env: {},
        rows: 24,
        cols: 80,
        onData: () => true,
        onExit: () => {},
        wrapper: { argv: ["/bin/sh", "-c", script, "runner", "--"], pidNamespace }
      }).pipe(Effect.scoped))

  it.live("a runner that never starts its command is bounded, says so, and is killed", () =>
    Effect.gen(function*() {
      const failed = yield* Effect.flip(spawnUnderRunner("trap '' HUP; exec sleep 9173", false))
      expect(failed.message).toBe("the runner did not start the shell within 10000ms")
      // SIGKILLed as the spawn's scope closed: gone once the kernel has run the kill.
      yield* until(
        () => !processTable().some((row) => commandLineOf(row.pid) === "sleep 9173" && isAlive(row.pid)),
        "the runner is still alive"
      )
    }).pipe(Effect.provide(NodePtySpawner.layer)), 20_000)

  it.live("a runner that exits before its command says so, with the first line it printed", () =>
    Effect.gen(function*() {
      const failed = yield* Effect.flip(spawnUnderRunner("echo 'bwrap: no way' >&2; exit 1", true))
      expect(failed.message).toBe("the runner exited before the shell started: bwrap: no way")
    }).pipe(Effect.provide(NodePtySpawner.layer)))
})
