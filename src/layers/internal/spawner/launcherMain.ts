/**
 * The launcher's program: a small Node process, one per spawner layer, that spawns commands on the
 * host's behalf (the host's side is `Launcher.ts`). The host starts it as
 * `node --single-threaded --max-semi-space-size=1 launcherMain.js <gate text> <tmpdir> [no-spare]`, in its own
 * session, with `/` as cwd and only `PATH` in its env.
 *
 * Descriptors:
 * - 0: a socket pair the host holds and never writes. Its end (EOF or an error) means the host died.
 * - 1: the pid lines, `<id> <pid>\n` per launched command, read by the host.
 * - 2: /dev/null.
 * - 3: the IPC channel (JSON), not close-on-exec: each child gets /dev/null there (or its script pipe),
 *   which its gate closes.
 * - 4 and up: /dev/null where the host inherited a descriptor, so that the children inherit /dev/null.
 *
 * Messages, each told apart by its `_tag`. Host → launcher ({@link HostMessage}): `Launch`
 * ({@link LaunchMessage}: an `id`, the file, argv, cwd, stdio kinds, stdin and script; the env only when
 * it is not the last launch's; the groups forgotten since the last message), `Forget` alone, and
 * `Goodbye` before it closes.
 *
 * Launcher → host ({@link LauncherMessage}): `Ready` once; per launch either `SpawnFailed` (nothing
 * started) or, in this order, `Started` (the pid) with the child's stdout as handle, `Stderr` with its
 * stderr as handle, and `Exited` (code and signal).
 *
 * The order of one launch keeps "no command runs before the host has its pid" (its owner is
 * `gate.ts`): the child is spawned waiting (a fresh bash in its gate, a spare on its fd 5); the pid
 * line is written to fd 1, synchronously, so the host has it even if the launcher dies next; only then
 * the admission goes to the gate's fd 4 (or the request to the spare's fd 5), then stdin and the
 * script; then the pipes are handed over. A pid line the host cannot read (EPIPE) means the host is
 * gone: the launcher ends, and the waiting command never runs.
 *
 * Host death: the launcher is the reaper of the commands it started. It remembers the group of each
 * until the host forgets it (the host saw the group gone). If the host's end shows without a goodbye,
 * every remembered group is SIGKILLed (`HostReaper.ts` is the reaper of the groups the host spawns
 * itself).
 *
 * While idle, it keeps one spare bash (see `spare.ts`) for the last call's file, cwd, env and stdio,
 * which the next such call runs in.
 *
 * @internal
 */
import * as ChildProcess from "node:child_process"
import * as NodeFs from "node:fs"
import type { Socket } from "node:net"
import * as NodePath from "node:path"
import type { Readable, Writable } from "node:stream"
import { admission } from "./gate.js"
import { procStatFields } from "./procStat.js"
import {
  spareIdleMs,
  spareLifetimeMs,
  spareRequest,
  spareRequestMaxBytes,
  spareScript,
  spareServes
} from "./spare.js"

type Env = Readonly<Record<string, string>>

/** A launch: what the host decided about one spawn (the env is the last one sent when absent). */
export interface LaunchMessage {
  readonly _tag: "Launch"
  readonly id: number
  readonly file: string
  readonly args: ReadonlyArray<string>
  readonly cwd: string
  readonly stdio: ReadonlyArray<"pipe" | "ignore">
  readonly env?: Env
  readonly stdin?: string | undefined
  /** Bytes for stdin: JSON carries text, so they travel as base64. */
  readonly stdinBase64?: string | undefined
  /** A script too long for argv, written to the child's fd 3. */
  readonly script?: string | undefined
  readonly forget?: ReadonlyArray<number>
}

/** What the host sends. */
export type HostMessage =
  | LaunchMessage
  | { readonly _tag: "Forget"; readonly forget: ReadonlyArray<number> }
  | { readonly _tag: "Goodbye" }

/** What the launcher sends. */
export type LauncherMessage =
  | { readonly _tag: "Ready" }
  | { readonly _tag: "SpawnFailed"; readonly id: number; readonly code: string | undefined; readonly message: string }
  | { readonly _tag: "Started"; readonly id: number; readonly pid: number }
  | { readonly _tag: "Stderr"; readonly id: number }
  | { readonly _tag: "Exited"; readonly id: number; readonly exit: readonly [number | null, NodeJS.Signals | null] }

interface Spare {
  readonly child: ChildProcess.ChildProcess
  readonly file: string
  readonly cwd: string
  readonly env: Env
  readonly stdin: "pipe" | "ignore" | undefined
  readonly script: boolean
  ready: boolean
  taken: boolean
  discarded: boolean
  lifetime: ReturnType<typeof setTimeout> | undefined
}

const ignore = () => {}

/** The stream at descriptor `fd` of `child` (Node types only the first five). */
const pipeAt = (child: ChildProcess.ChildProcess, fd: number) =>
  (child.stdio as ReadonlyArray<Readable | Writable | null | undefined>)[fd]

/**
 * Keeps every byte of a child's pipe in the pipe, for the host: Node starts reading a new child's
 * pipes in the tick that spawned it (it reads nothing before that tick ends), and a handle waits in
 * the channel's queue until the host acknowledges the previous one. `Socket.pause()` stops the
 * stream's flow but not the handle's reads, and `child_process` offers no socket option to start
 * paused: the reads are stopped on the socket's handle.
 */
const holdForHost = (stream: Readable | null | undefined): void => {
  const handle = (stream as { readonly _handle?: { readonly readStop?: () => number } } | null | undefined)?._handle
  handle?.readStop?.()
}

const fileKey = (path: string) => {
  const stat = NodeFs.statSync(path, { bigint: true })
  return `${stat.dev}:${stat.ino}`
}

/** The file an exec of `file` runs from `cwd` (bash's PATH search, as Node's) and its key, if any. */
const onPath = (file: string, cwd: string, path: string | undefined) => {
  const candidates = file.includes("/") ? [file] : (path ?? "").split(":").map((dir) => NodePath.join(dir, file))
  for (const candidate of candidates) {
    const absolute = NodePath.isAbsolute(candidate) ? candidate : NodePath.join(cwd, candidate)
    try {
      NodeFs.accessSync(absolute, NodeFs.constants.X_OK)
      if (NodeFs.statSync(absolute).isFile()) return { path: absolute, key: fileKey(absolute) }
    } catch {
      // Not this one.
    }
  }
  return undefined
}

/** bash exports an `OLDPWD` that names no directory without its value: a spare would pass that on. */
const oldpwdServes = (env: Env) => {
  if (env.OLDPWD === undefined) return true
  try {
    return NodeFs.statSync(env.OLDPWD).isDirectory()
  } catch {
    return false
  }
}

const main = (gate: string, tmpdir: string, spares: boolean): void => {
  process.title = "effect-bash launcher"
  // A child's pipe is a socket (libuv's process pipes are socket pairs), which the channel carries.
  const send = (message: LauncherMessage, handle?: Readable | null) =>
    process.send!(message, (handle ?? undefined) as Socket | undefined)
  const failed = (id: number, error: unknown) => {
    const { code, message } = error as { readonly code?: unknown; readonly message?: unknown }
    send({ _tag: "SpawnFailed", id, code: typeof code === "string" ? code : undefined, message: String(message) })
  }
  const devNull = NodeFs.openSync("/dev/null", "r")
  // The gate file: nameless (O_TMPFILE) and held read-only, so no command can name, write or remove it.
  const gateWritable = NodeFs.openSync(
    tmpdir,
    0o20000000 | NodeFs.constants.O_DIRECTORY | NodeFs.constants.O_WRONLY,
    0o400
  )
  NodeFs.writeSync(gateWritable, gate)
  const gateFile = NodeFs.openSync(`/proc/self/fd/${gateWritable}`, "r")
  NodeFs.closeSync(gateWritable)
  const spareScripts = [spareScript(false), spareScript(true)] as const

  // The last request's env; a spare's is the same without the gate (its gate is fd 5).
  let env: Env = {}
  let spareEnv: Env | undefined
  // Spares need /proc (a spare's cwd and binary are checked there). One that exits with 125 before it
  // waits means this bash cannot serve as one: none is started again. A spare whose binary is not the
  // one its PATH names (a wrapper script named bash) never fits: none is started again for its env.
  let sparesWork = spares && NodeFs.existsSync("/proc/self/cwd")
  let noSparesFor: Env | undefined
  // Binaries (by file) a spare has waited in: a spare of one, still starting, is as good (it reads the
  // request when it gets there); another is taken only once it waits.
  const proven = new Set<string>()
  let spare: Spare | undefined
  let running = 0
  let idle: ReturnType<typeof setTimeout> | undefined
  // The groups of the commands it started, until the host forgets each (it saw the group gone): they
  // are killed if the host ends without its goodbye (it died).
  const groups = new Set<number>()
  let goodbye = false

  // The host's end: a spare goes, and without a goodbye every group still remembered is killed.
  const ended = () => {
    spare?.child.kill("SIGKILL")
    if (!goodbye) {
      for (const pgid of groups) {
        try {
          process.kill(-pgid, "SIGKILL")
        } catch {
          // Gone already.
        }
      }
    }
    process.exit(0)
  }

  // The binary a fresh spawn of `m` would run (its path and file key), if the spare would run `m` as
  // that would: the same file (the binary its PATH names now is the spare's), env object and stdio,
  // in the directory that `m.cwd` names now, which it may still enter; and the spare is not stopped.
  const fits = (candidate: Spare, m: LaunchMessage) => {
    const pid = candidate.child.pid!
    try {
      if (
        candidate.file !== m.file || candidate.cwd !== m.cwd || candidate.env !== env ||
        candidate.stdin !== m.stdio[0] || candidate.script !== (m.script !== undefined) || !oldpwdServes(env)
      ) return undefined
      const state = procStatFields(String(pid))?.[0]
      if (state === undefined || state === "T" || state === "t") return undefined
      NodeFs.accessSync(m.cwd, NodeFs.constants.X_OK)
      if (fileKey(m.cwd) !== fileKey(`/proc/${pid}/cwd`)) return undefined
      const binary = onPath(m.file, m.cwd, env.PATH)
      return binary?.key === fileKey(`/proc/${pid}/exe`) ? binary : undefined
    } catch {
      return undefined
    }
  }
  const discard = (candidate: Spare) => {
    if (spare === candidate) spare = undefined
    candidate.discarded = true
    clearTimeout(candidate.lifetime)
    candidate.child.kill("SIGKILL")
    for (const stream of candidate.child.stdio) stream?.destroy()
  }
  const startSpare = (m: LaunchMessage) => {
    if (env === noSparesFor || !spareServes(env) || !oldpwdServes(env)) return
    if (spareEnv === undefined) {
      const { BASH_ENV: _, ...rest } = env
      spareEnv = rest
    }
    const script = m.script !== undefined
    let child: ChildProcess.ChildProcess
    try {
      const stdio: Array<ChildProcess.IOType | number> = [
        m.stdio[0] ?? "ignore",
        "pipe",
        devNull,
        script ? "pipe" : devNull,
        "pipe",
        "pipe"
      ]
      child = ChildProcess.spawn(m.file, ["--norc", "--noprofile", "-c", "--", spareScripts[script ? 1 : 0], "effect-bash spare"], {
        cwd: m.cwd,
        env: spareEnv,
        detached: true,
        stdio
      })
    } catch {
      return
    }
    child.on("error", ignore)
    if (child.pid === undefined) return
    holdForHost(child.stdout)
    holdForHost(pipeAt(child, 4) as Readable)
    const candidate: Spare = {
      child,
      file: m.file,
      cwd: m.cwd,
      env,
      stdin: m.stdio[0],
      script,
      ready: false,
      taken: false,
      discarded: false,
      lifetime: undefined
    }
    candidate.lifetime = setTimeout(() => discard(candidate), spareLifetimeMs)
    // Checked once it waits, unless taken meanwhile (it runs its command then, and may be gone).
    ;(pipeAt(child, 5) as Readable).once("data", () => {
      candidate.ready = true
      if (candidate.taken) return
      let key: string
      try {
        key = fileKey(`/proc/${child.pid}/exe`)
      } catch {
        return // Gone meanwhile (killed): its exit drops it.
      }
      if (onPath(candidate.file, candidate.cwd, candidate.env.PATH)?.key === key) {
        proven.add(key)
        return
      }
      noSparesFor = candidate.env
      discard(candidate)
    })
    child.once("exit", (code) => {
      if (code === 125 && !candidate.ready && !candidate.taken && !candidate.discarded) sparesWork = false
      if (spare === candidate) spare = undefined
    })
    spare = candidate
  }
  // The spare for `m` and the request to write to it, if it fits (one that does not is discarded)
  // and waits (or its binary is proven); none for a request too long to be worth one.
  const takeSpare = (m: LaunchMessage) => {
    const candidate = spare
    if (candidate === undefined) return undefined
    const binary = fits(candidate, m)
    if (binary === undefined) return discard(candidate)
    if (!candidate.ready && !proven.has(binary.key)) return undefined
    const request = spareRequest(binary.path, [m.file, ...m.args])
    if (Buffer.byteLength(request) > spareRequestMaxBytes) return undefined
    spare = undefined
    candidate.taken = true
    clearTimeout(candidate.lifetime)
    return { child: candidate.child, request }
  }

  const launch = (m: LaunchMessage) => {
    clearTimeout(idle)
    if (m.env !== undefined) {
      env = m.env
      spareEnv = undefined
    }
    const taken = takeSpare(m)
    let child = taken?.child
    if (child === undefined) {
      try {
        const stdio: Array<ChildProcess.IOType | number> = [
          ...m.stdio,
          ...(m.stdio.length > 3 ? [] : [devNull]),
          "pipe",
          gateFile
        ]
        child = ChildProcess.spawn(m.file, m.args, { cwd: m.cwd, env, detached: true, stdio })
      } catch (error) {
        return failed(m.id, error)
      }
      if (child.pid === undefined) return void child.once("error", (error) => failed(m.id, error))
      child.on("error", ignore)
      holdForHost(child.stdout)
      holdForHost(child.stderr)
    }
    const pid = child.pid!
    groups.add(pid)
    try {
      NodeFs.writeSync(1, `${m.id} ${pid}\n`)
    } catch {
      return ended()
    }
    const stdin = m.stdinBase64 === undefined ? m.stdin : Buffer.from(m.stdinBase64, "base64")
    const writes: ReadonlyArray<readonly [unknown, string | Buffer | undefined]> = [
      taken === undefined ? [pipeAt(child, 4), admission] : [pipeAt(child, 5), taken.request],
      [child.stdin, stdin],
      [child.stdio[3], m.script]
    ]
    for (const [stream, text] of writes) {
      if (text === undefined || stream === null || stream === undefined) continue
      const writable = stream as Writable
      writable.on("error", ignore)
      writable.end(text)
    }
    send({ _tag: "Started", id: m.id, pid }, child.stdout)
    send({ _tag: "Stderr", id: m.id }, (taken === undefined ? child.stderr : pipeAt(child, 4)) as Readable | null)
    running++
    child.once("exit", (code, signal) => {
      send({ _tag: "Exited", id: m.id, exit: [code, signal] })
      if (--running === 0 && spare === undefined && sparesWork) idle = setTimeout(startSpare, spareIdleMs, m)
    })
  }

  process.on("message", (m: HostMessage) => {
    switch (m._tag) {
      case "Launch":
        for (const pgid of m.forget ?? []) groups.delete(pgid)
        return launch(m)
      case "Forget":
        for (const pgid of m.forget) groups.delete(pgid)
        return
      case "Goodbye":
        goodbye = true
    }
  })
  // A spare would also end at the end of fd 5, but only after the launcher: nothing of the layer
  // outlives the launcher. The host's end shows on its stdin as well as on the channel: Node holds a
  // channel's `disconnect` back while a handle it sent waits for its acknowledgement, which a dead
  // host never sends. A send on a closed channel is reported as an `error`: the end is seen here.
  process.stdin.on("data", ignore).on("end", ended).on("error", ended)
  process.on("disconnect", ended)
  process.on("error", ignore)
  send({ _tag: "Ready" })
}

main(process.argv[2] ?? "", process.argv[3] ?? "", process.argv[4] !== "no-spare")
