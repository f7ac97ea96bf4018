/**
 * A pre-forked launcher: a small Node process, started once per spawner layer, that spawns commands
 * on the host's behalf and hands each child's stdout and stderr to the host over its IPC channel
 * (the descriptors themselves, so no byte is copied on the way). A fork copies the page tables of
 * the process that forks: the host's heap grows with its work, the launcher's stays small, so each
 * spawn costs the host an IPC message instead of a fork. While idle, it keeps one spare bash started
 * for the last call's cwd, env and stdio, which the next such call runs in (see {@link spareScript}).
 *
 * The launcher only executes what the host decided (argv, env, cwd, stdio kinds, stdin and script
 * text): process groups, kills and liveness stay the host's, by pid, as for a direct spawn. One duty
 * is the launcher's: if the host dies, it kills the groups it started that the host has not
 * forgotten, as the watchdog does for the host's own spawns. Until the launcher is ready, and after
 * it died, the spawner spawns directly.
 *
 * @internal
 */
import * as ChildProcess from "node:child_process"
import { EventEmitter } from "node:events"
import type { Socket } from "node:net"
import * as NodeOs from "node:os"
import { Readable } from "node:stream"
import { admission } from "./gate.js"
import { procStatFields, procStatFieldsWith } from "./procStat.js"

/**
 * The script of a spare: a bash the launcher starts ahead of a request, while it is idle, for the
 * file, cwd, env and stdio of the last command that ran, so that the fork and bash's start-up are off
 * the next call's path. Once waiting, it says so (a `.` on fd 5), then waits on fd 5 for the command's
 * binary (the launcher's PATH search, which bash's own would not always repeat) and argv,
 * single-quoted, with a `.` line after them. The launcher writes that once the host knows the pid,
 * so, as with the gate, no command runs before, and one whose request was cut off (the launcher died)
 * never runs. Its own stderr is /dev/null until then (bash's start-up warnings come once, from the
 * command's bash); fd 4 is the real one. Then it `exec`s the binary with the argv: the command is the
 * same `bash -c` as a launch without a spare, with the same pid, group and descriptors (fd 3 is kept
 * for a script, as the gate keeps it). A bash older than 4.3 (no negative subscripts) exits with 125
 * at once.
 *
 * @internal
 */
export const spareScript = (script: boolean) =>
  "((BASH_VERSINFO[0] * 100 + BASH_VERSINFO[1] >= 403)) || exit 125; IFS=; printf . >&5; " +
  "mapfile -u 5 __effect_bash_l; exec 5<&-; [[ ${__effect_bash_l[-1]} == . ]] || exit 125; " +
  "unset '__effect_bash_l[-1]'; eval \"__effect_bash_a=(${__effect_bash_l[*]})\"; " +
  `exec 2>&4 4>&-${script ? "" : " 3<&-"}; ` +
  "exec -a \"${__effect_bash_a[1]}\" -- \"${__effect_bash_a[0]}\" \"${__effect_bash_a[@]:2}\""

/** A request as a spare reads it: the binary and each word of the argv single-quoted, then the `.` line. */
export const spareRequest = (binary: string, argv: ReadonlyArray<string>): string =>
  [binary, ...argv].map((word) => `'${word.replaceAll("'", "'\\''")}'`).join(" ") + "\n."

/**
 * Whether a spare may serve `env`, so that its command sees what a fresh bash's would: the spare's
 * own bash takes in bash's dynamic variables from the env (`BASH_ARGV0` becomes its `$0`, `RANDOM`
 * its seed, …) and passes them on changed or not at all, and it resets a shell level below 0, or
 * from 1000 on (with a warning). An `OLDPWD` that names no directory is checked by the launcher.
 *
 * @internal
 */
export const spareServes = (env: Readonly<Record<string, string>>): boolean => {
  const level = Number(env.SHLVL ?? 0)
  if (level < 0 || level >= 999) return false
  for (const name in env) {
    switch (name) {
      case "BASH_ARGV0":
      case "BASH_COMMAND":
      case "BASH_SUBSHELL":
      case "BASHPID":
      case "COMP_WORDBREAKS":
      case "EPOCHREALTIME":
      case "EPOCHSECONDS":
      case "HISTCMD":
      case "LINENO":
      case "RANDOM":
      case "SRANDOM":
        return false
    }
  }
  return true
}

// How long the launcher must have been idle (no command running, no request) before it starts a
// spare: a spare starting while calls follow each other closely competes with them for the CPU
// and for the launcher itself, and would cost them more than it saves.
const spareIdleMs = 10
// How long a spare waits before it ends unused: it holds its directory (an unmount there fails).
const spareLifetimeMs = 60_000
// bash reads a pipe one byte per read: a longer request costs the spare more than it saves, and
// takes the way without one.
const spareRequestMaxBytes = 1024

/**
 * The launcher's program; `gate`, the text of its gate file, made under `tmpdir` (see `gate.ts`).
 * Node starts reading a new child's pipes in the tick that spawned it but reads nothing before that
 * tick ends: stopping the reads at once leaves every byte in the pipe for the host.
 */
const program = (gate: string, tmpdir: string) => `"use strict"
process.title = "effect-bash launcher"
const { spawn } = require("node:child_process")
// The channel is fd 3, and not close-on-exec: each child gets /dev/null there (or its script pipe),
// which its gate closes.
const { accessSync, closeSync, constants, existsSync, openSync, readFileSync, statSync, writeSync } = require("node:fs")
const { isAbsolute, join } = require("node:path")
const devNull = openSync("/dev/null", "r")
const ignore = () => {}
const failed = (id, error) => process.send({ id, error: { code: error.code, message: error.message } })
// The gate file: nameless (O_TMPFILE) and held read-only, so no command can name, write or remove it.
const gateWritable = openSync(${JSON.stringify(tmpdir)}, 0o20000000 | constants.O_DIRECTORY | constants.O_WRONLY, 0o400)
writeSync(gateWritable, ${JSON.stringify(gate)})
const gateFile = openSync("/proc/self/fd/" + gateWritable, "r")
closeSync(gateWritable)
const spareScripts = ${JSON.stringify([spareScript(false), spareScript(true)])}
const spareRequest = ${spareRequest.toString()}
const spareServes = ${spareServes.toString()}
const procStatFields = (${procStatFieldsWith.toString()})(readFileSync)
// The last request's env; a spare's is the same without the gate (its gate is fd 5).
let env
let spareEnv
// Spares need /proc (a spare's cwd and binary are checked there). One that exits with 125 before it
// waits means this bash cannot serve as one: none is started again. A spare whose binary is not the
// one its PATH names (a wrapper script named bash) never fits: none is started again for its env.
let sparesWork = existsSync("/proc/self/cwd")
let noSparesFor
// Binaries (by file) a spare has waited in: a spare of one, still starting, is as good (it reads the
// request when it gets there); another is taken only once it waits.
const proven = new Set()
let spare
let running = 0
let idle
// The groups of the commands it started, until the host forgets each (it saw the group gone): they
// are killed if the host ends without its goodbye (it died). Guarded here, the host pays no write to
// its watchdog per call.
const groups = new Set()
let goodbye = false
// The host's end: a spare goes, and without a goodbye every group still guarded is killed.
const ended = () => {
  spare?.child.kill("SIGKILL")
  if (!goodbye) {
    for (const pgid of groups) {
      try {
        process.kill(-pgid, "SIGKILL")
      } catch {}
    }
  }
  process.exit(0)
}
const fileKey = (path) => {
  const stat = statSync(path, { bigint: true })
  return stat.dev + ":" + stat.ino
}
// The file an exec of file runs from cwd (bash's PATH search, as Node's) and its key, or undefined.
const onPath = (file, cwd, path) => {
  const candidates = file.includes("/") ? [file] : (path ?? "").split(":").map((dir) => join(dir, file))
  for (const candidate of candidates) {
    const absolute = isAbsolute(candidate) ? candidate : join(cwd, candidate)
    try {
      accessSync(absolute, constants.X_OK)
      if (statSync(absolute).isFile()) return { path: absolute, key: fileKey(absolute) }
    } catch {}
  }
}
// The binary a fresh spawn of request m would run (its path and file key), if the spare would run m
// as that would: the same file (the binary its PATH names now is the spare's), env object and stdio,
// in the directory that m.cwd names now, which it may still enter; and the spare is not stopped.
const fits = (candidate, m) => {
  const pid = candidate.child.pid
  try {
    if (
      candidate.file !== m.file || candidate.cwd !== m.cwd || candidate.env !== env ||
      candidate.stdin !== m.stdio[0] || candidate.script !== (m.script !== undefined) || !oldpwdServes()
    ) return undefined
    const state = procStatFields(String(pid))?.[0]
    if (state === undefined || state === "T" || state === "t") return undefined
    accessSync(m.cwd, constants.X_OK)
    if (fileKey(m.cwd) !== fileKey("/proc/" + pid + "/cwd")) return undefined
    const binary = onPath(m.file, m.cwd, env.PATH)
    return binary?.key === fileKey("/proc/" + pid + "/exe") ? binary : undefined
  } catch {
    return undefined
  }
}
const discard = (candidate) => {
  if (spare === candidate) spare = undefined
  candidate.discarded = true
  clearTimeout(candidate.lifetime)
  candidate.child.kill("SIGKILL")
  for (const stream of candidate.child.stdio) stream?.destroy()
}
// bash exports an OLDPWD that names no directory without its value: a spare would pass that on.
const oldpwdServes = () => {
  if (env.OLDPWD === undefined) return true
  try {
    return statSync(env.OLDPWD).isDirectory()
  } catch {
    return false
  }
}
const startSpare = (m) => {
  if (env === noSparesFor || !spareServes(env) || !oldpwdServes()) return
  if (spareEnv === undefined) {
    const { BASH_ENV, ...rest } = env
    spareEnv = rest
  }
  const script = m.script !== undefined
  let child
  try {
    const stdio = [m.stdio[0], "pipe", devNull, script ? "pipe" : devNull, "pipe", "pipe"]
    child = spawn(m.file, ["--norc", "--noprofile", "-c", "--", spareScripts[script ? 1 : 0], "effect-bash spare"], {
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
  child.stdout._handle.readStop()
  child.stdio[4]._handle.readStop()
  const candidate = {
    child, file: m.file, cwd: m.cwd, env, stdin: m.stdio[0], script,
    ready: false, taken: false, discarded: false, lifetime: undefined
  }
  candidate.lifetime = setTimeout(() => discard(candidate), ${spareLifetimeMs})
  // Checked once it waits, unless taken meanwhile (it runs its command then, and may be gone).
  child.stdio[5].once("data", () => {
    candidate.ready = true
    if (candidate.taken) return
    let key
    try {
      key = fileKey("/proc/" + child.pid + "/exe")
    } catch {
      return // Gone meanwhile (killed): its exit drops it.
    }
    if (onPath(candidate.file, candidate.cwd, candidate.env.PATH)?.key === key) return proven.add(key)
    noSparesFor = candidate.env
    discard(candidate)
  })
  child.once("exit", (code) => {
    if (code === 125 && !candidate.ready && !candidate.taken && !candidate.discarded) sparesWork = false
    if (spare === candidate) spare = undefined
  })
  spare = candidate
}
// The spare for request m and the request to write to it, if it fits (one that does not is
// discarded) and waits (or its binary is proven); none for a request too long to be worth one.
const takeSpare = (m) => {
  const candidate = spare
  if (candidate === undefined) return undefined
  const binary = fits(candidate, m)
  if (binary === undefined) return discard(candidate)
  if (!candidate.ready && !proven.has(binary.key)) return undefined
  const request = spareRequest(binary.path, [m.file, ...m.args])
  if (Buffer.byteLength(request) > ${spareRequestMaxBytes}) return undefined
  spare = undefined
  candidate.taken = true
  clearTimeout(candidate.lifetime)
  return { child: candidate.child, request }
}
process.on("message", (m) => {
  if (m.forget !== undefined) for (const pgid of m.forget) groups.delete(pgid)
  if (m.goodbye === true) goodbye = true
  if (m.file === undefined) return
  clearTimeout(idle)
  if (m.env !== undefined) {
    env = m.env
    spareEnv = undefined
  }
  const taken = takeSpare(m)
  let child = taken?.child
  if (child === undefined) {
    try {
      const stdio = [...m.stdio, ...(m.stdio.length > 3 ? [] : [devNull]), "pipe", gateFile]
      child = spawn(m.file, m.args, { cwd: m.cwd, env, detached: true, stdio })
    } catch (error) {
      return failed(m.id, error)
    }
    if (child.pid === undefined) return child.once("error", (error) => failed(m.id, error))
    child.on("error", ignore)
    child.stdout._handle.readStop()
    child.stderr._handle.readStop()
  }
  groups.add(child.pid)
  // The host learns the pid from this line even if the launcher dies next; only then may the
  // command run: a spare reads its request on fd 5, a fresh bash's gate its admission on fd 4. A
  // line the host cannot read (EPIPE) means it is gone, and this command with it.
  try {
    writeSync(1, m.id + " " + child.pid + "\\n")
  } catch {
    return ended()
  }
  const gate = child.stdio[taken === undefined ? 4 : 5]
  gate.on("error", ignore)
  gate.end(taken === undefined ? ${JSON.stringify(admission)} : taken.request)
  const stderr = taken === undefined ? child.stderr : child.stdio[4]
  const stdin = m.stdinBase64 === undefined ? m.stdin : Buffer.from(m.stdinBase64, "base64")
  for (const [stream, text] of [[child.stdin, stdin], [child.stdio[3], m.script]]) {
    if (text === undefined || !stream) continue
    stream.on("error", ignore)
    stream.end(text)
  }
  process.send({ id: m.id, pid: child.pid }, child.stdout)
  process.send({ id: m.id }, stderr)
  running++
  child.once("exit", (code, signal) => {
    process.send({ id: m.id, exit: [code, signal] })
    if (--running === 0 && spare === undefined && sparesWork) idle = setTimeout(startSpare, ${spareIdleMs}, m)
  })
})
// A spare would also end at the end of fd 5, but only after the launcher: nothing of the layer
// outlives the launcher. The host's end shows on its stdin, a socket pair the host holds and never
// writes, as well as on the channel: Node holds a channel's \`disconnect\` back while a handle it
// sent waits for its acknowledgement, which a dead host never sends. A send on a closed channel is
// reported as an \`error\`: the end is seen here.
process.stdin.on("data", ignore).on("end", ended).on("error", ended)
process.on("disconnect", ended)
process.on("error", ignore)
process.send({ ready: true })
`

/** What the host decided about one spawn. */
export interface LaunchRequest {
  readonly file: string
  readonly args: ReadonlyArray<string>
  readonly cwd: string
  readonly env: Readonly<Record<string, string>>
  readonly stdio: ReadonlyArray<"pipe" | "ignore">
  readonly stdin?: string | Uint8Array | undefined
  readonly script?: string | undefined
}

/**
 * A launch the launcher died (or was closed) before handing over; `pid` when it had started the
 * child, whose group the host then kills. Without one no command ran: the gate kept it waiting.
 */
export interface LauncherGone {
  readonly _tag: "LauncherGone"
  readonly pid: number | undefined
  /** The launcher was closed (with the layer), rather than dying on its own. */
  readonly closed: boolean
}

/**
 * A command the launcher ran whose pipes did not reach the host (a host out of descriptors drops
 * them): it has exited, with `exit`, and its output is lost. `pid` when known, for its group.
 */
export interface PipesLost {
  readonly _tag: "PipesLost"
  readonly pid: number | undefined
  readonly exit: readonly [number | null, NodeJS.Signals | null]
}

/** How a launch ends for its caller. */
export type LaunchResult = LaunchedChild | LaunchFailure | LauncherGone | PipesLost

/** A spawn that failed before a process started, as Node reported it in the launcher. */
export interface LaunchFailure {
  readonly code: string | undefined
  readonly message: string
}

/**
 * A child started by the launcher, seen as much like a `ChildProcess` as the spawner needs: its
 * pid, its pipes, and one `exit` event with Node's code and signal.
 */
export class LaunchedChild extends EventEmitter {
  exitCode: number | null = null
  signalCode: NodeJS.Signals | null = null
  /** Also true when the launcher died first: the exit is then unknown (both fields null). */
  exited = false
  stderr: Readable | null = null
  constructor(readonly pid: number, readonly stdout: Readable) {
    super()
  }
  /** Records the exit and emits it. */
  settle(exitCode: number | null, signalCode: NodeJS.Signals | null): void {
    this.exitCode = exitCode
    this.signalCode = signalCode
    this.exited = true
    this.emit("exit", exitCode, signalCode)
  }
  get stdio(): ReadonlyArray<Readable | null> {
    return [null, this.stdout, this.stderr]
  }
}

interface Pending {
  readonly started: (result: LaunchResult) => void
  /** Known from the launcher's stdout as soon as the child runs, before its pipes are handed over. */
  pid?: number
  child?: LaunchedChild
}

/** The host's side of one launcher. */
export interface Launcher {
  /** Whether a spawn can go through the launcher now. */
  readonly ready: () => boolean
  /** Resolves once the launcher is ready (`true`), or gone or not ready within two seconds (`false`). */
  readonly started: Promise<boolean>
  /**
   * Starts `request`; `started` is called once: with the child, a spawn failure, or
   * {@link LauncherGone} when the launcher died before handing the child over.
   */
  readonly launch: (request: LaunchRequest, started: Pending["started"]) => void
  /**
   * Whether the launcher kills the groups it started if the host dies (until each is forgotten):
   * true until it has exited (`onUnguarded` is told then: the host's watchdog must take over).
   */
  readonly guards: () => boolean
  /** The launcher's pid (undefined if it never started): the watchdog resumes it if it was stopped. */
  readonly pid: number | undefined
  /** The group of a command it started is gone: it must never be killed again (its id may be reused). */
  readonly forget: (pgid: number) => void
  /**
   * Disconnects; resolves once the launcher has exited (killed if it does not within a second) and
   * every launch in flight is settled. Children it handed over keep running, owned by the host; one
   * it started but did not hand over is reported with its pid.
   */
  readonly close: () => Promise<void>
}

// A launch waiting this long looks at the launcher: a stopped one is killed (the spawner spawns
// directly from then on); a busy one, or a host that was stalled itself, is given as long again.
const startBoundMs = 5_000
// How long the launcher may take to start before a layer stops waiting for it.
const readyBoundMs = 2_000
// How long closing waits for the launcher to exit before it is killed.
const exitBoundMs = 1_000
// How long the end of the launcher's stdout is waited for once it has exited.
const linesBoundMs = 100
// How often the leader of a group is looked for once the launcher that would report its exit died.
const orphanPollMs = 20
// How long a forgotten group waits for the next launch to carry it to the launcher before it is
// sent alone: calls in a row cost no message of their own, and the launcher holds a gone group's id
// only 20 ms longer than the watchdog would (Linux hands out pids in turn; `pid_max` can be 32768).
const forgetBatchMs = 20

// A process state from `/proc/<pid>/stat`, or undefined when it is gone.
const stateOf = (pid: number): string | undefined => procStatFields(String(pid))?.[0]
const isStopped = (pid: number) => {
  const state = stateOf(pid)
  return state === "T" || state === "t"
}
const isGone = (pid: number) => {
  const state = stateOf(pid)
  return state === undefined || state === "Z" || state === "X"
}

/**
 * Starts the launcher; `extraStdio` are its stdio entries from fd 3 on (the host's inherited
 * descriptors masked), but fd 3 is its channel; `gate`, the text of its gate file. `onGone` is told
 * once if it dies while in use, once the launches in flight are settled; `onUnguarded`, with its
 * pid, as soon as it has exited (unless closed).
 */
export const startLauncher = (
  extraStdio: ReadonlyArray<"ignore" | number>,
  gate: string,
  onGone: (reason: string) => void,
  onUnguarded: (pid: number) => void
): Launcher => {
  let isReady = false
  let alive = true
  let nextId = 0
  let sentEnv: Readonly<Record<string, string>> | undefined
  // Groups gone since the last message, and the timer that sends them if no launch comes first.
  let forgotten: Array<number> = []
  let forgetBatch: ReturnType<typeof setTimeout> | undefined
  const takeForgotten = () => {
    const taken = forgotten
    forgotten = []
    return taken
  }
  const pending = new Map<number, Pending>()
  let reportStarted: (ready: boolean) => void = () => {}
  const started = new Promise<boolean>((resolve) => {
    // One that is not ready in time is not waited for (the host spawns until it is).
    const bound = setTimeout(() => resolve(false), readyBoundMs)
    reportStarted = (ready) => {
      clearTimeout(bound)
      resolve(ready)
    }
  })
  // A small heap is the point: no compiler threads or large young generation are needed here.
  const args = ["--single-threaded", "--max-semi-space-size=1", "-e", program(gate, NodeOs.tmpdir())]
  const helper = ChildProcess.spawn(process.execPath, args, {
    cwd: "/",
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin" },
    detached: true,
    stdio: ["pipe", "pipe", "ignore", "ipc", ...extraStdio.slice(1)],
    serialization: "json"
  })
  // Its stdin (a socket pair), never written or closed by the host: the end it sees if the host dies.
  const hostEnd = helper.stdin!
  hostEnd.on("error", () => {})
  ;(hostEnd as Socket).unref()
  let exited = false
  // Settled once the launcher has exited and its last pid line was read (see `gone`).
  let reportEnded: () => void = () => {}
  const ended = new Promise<void>((resolve) => {
    reportEnded = resolve
  })
  let closing = false
  // Whether it still kills its groups if the host dies: not once closed (the goodbye) or exited.
  const guarding = () => alive && !closing && !exited
  // The launcher keeps the host alive only while a launch waits for its child's exit; its pid
  // lines never do.
  const setBusy = () => {
    if (pending.size === 0) {
      helper.unref()
      helper.channel?.unref()
    } else {
      helper.ref()
      helper.channel?.ref()
    }
  }
  ;(helper.stdout as Socket).unref()
  setBusy()

  // Every launch still waiting is settled once: one not started fails, a started one gets an
  // ended stderr if its own was not handed over yet. A started child runs on: its exit is reported,
  // unknown (null, null), once its leader is gone — one command that kills the launcher does not
  // end the other calls.
  const settleAll = (closed: boolean) => {
    alive = false
    isReady = false
    reportStarted(false)
    const waiting = [...pending.values()]
    pending.clear()
    for (const entry of waiting) {
      const child = entry.child
      if (child === undefined) {
        entry.started({ _tag: "LauncherGone", pid: entry.pid, closed })
        continue
      }
      if (child.stderr === null) {
        child.stderr = Readable.from([])
        entry.started(child)
      }
      const poll = setInterval(() => {
        if (!isGone(child.pid)) return
        clearInterval(poll)
        child.settle(null, null)
      }, orphanPollMs)
    }
  }
  const gone = (reason: string) => {
    if (!alive) return
    settleAll(closing)
    reportEnded()
    if (!closing) onGone(reason)
  }
  // Each line is `<id> <pid>`, written before the launcher hands anything over.
  let partial = ""
  helper.stdout!.setEncoding("utf8").on("data", (text: string) => {
    const lines = (partial + text).split("\n")
    partial = lines.pop()!
    for (const line of lines) {
      const [id, pid] = line.split(" ").map(Number)
      const entry = pending.get(id!)
      if (entry !== undefined && pid !== undefined) entry.pid = pid
    }
  })
  // A launcher that never started had nothing in flight. Otherwise (a send to a launcher that just
  // died, say) it takes no more launches and ends: its exit and last pid lines decide the launches
  // in flight, as when it dies — one it started must not look unstarted, or it would run twice.
  helper.on("error", (error) => {
    isReady = false
    if (helper.pid === undefined) gone(`launcher failed: ${error.message}`)
    else helper.kill("SIGKILL")
  })
  // Once the launcher exited and its last pid line was read (its stdout ended).
  let exitReason: string | undefined
  let linesEnded = false
  helper.stdout!.once("close", () => {
    linesEnded = true
    if (exitReason !== undefined) gone(exitReason)
  })
  helper.once("exit", (code, signal) => {
    exited = true
    hostEnd.destroy()
    if (!closing) onUnguarded(helper.pid!)
    exitReason = `launcher exited (${signal ?? `code ${code}`})`
    if (linesEnded) return gone(exitReason)
    // Another process holding the launcher's stdout (a command of the same user can take it with
    // pidfd_getfd) keeps it from ending: what the launcher wrote is in the pipe already, so it is
    // read (the I/O turn comes before the immediate) and the end is not waited for any longer.
    setTimeout(() => setImmediate(() => helper.stdout!.destroy()), linesBoundMs)
  })

  helper.on("message", (message: LauncherMessage, handle?: Readable) => {
    if (message.ready === true) {
      isReady = alive
      reportStarted(alive)
      return
    }
    const entry = message.id === undefined ? undefined : pending.get(message.id)
    if (entry === undefined) {
      handle?.destroy()
      return
    }
    if (message.error !== undefined) {
      pending.delete(message.id!)
      setBusy()
      entry.started({ code: message.error.code ?? undefined, message: message.error.message })
    } else if (message.pid !== undefined) {
      entry.pid = message.pid
      if (handle !== undefined) entry.child = new LaunchedChild(message.pid, handle)
    } else if (message.exit !== undefined) {
      pending.delete(message.id!)
      setBusy()
      // An exit before both pipes arrived: one was lost on the way, and the call says so.
      const child = entry.child
      if (child === undefined || child.stderr === null) {
        child?.stdout.destroy()
        return entry.started({ _tag: "PipesLost", pid: entry.pid, exit: message.exit })
      }
      child.settle(message.exit[0], message.exit[1])
    } else if (handle !== undefined && entry.child !== undefined) {
      entry.child.stderr = handle
      entry.started(entry.child)
    } else {
      handle?.destroy()
    }
  })

  return {
    ready: () => isReady,
    started,
    launch: (request, started) => {
      const id = nextId++
      let bound: ReturnType<typeof setTimeout>
      const look = () => {
        if (helper.pid !== undefined && isStopped(helper.pid)) helper.kill("SIGKILL")
        else bound = setTimeout(look, startBoundMs)
      }
      bound = setTimeout(look, startBoundMs)
      pending.set(id, {
        started: (result) => {
          clearTimeout(bound)
          started(result)
        }
      })
      setBusy()
      // JSON carries text: bytes for stdin travel as base64.
      const { env, stdin, ...rest } = request
      const input = typeof stdin === "string" || stdin === undefined
        ? { stdin }
        : { stdinBase64: Buffer.from(stdin.buffer, stdin.byteOffset, stdin.byteLength).toString("base64") }
      const forget = forgotten.length === 0 ? undefined : { forget: takeForgotten() }
      helper.send(env === sentEnv ? { id, ...rest, ...input, ...forget } : { id, ...rest, ...input, ...forget, env })
      sentEnv = env
    },
    guards: guarding,
    pid: helper.pid,
    forget: (pgid) => {
      if (!guarding()) return
      forgotten.push(pgid)
      forgetBatch ??= setTimeout(() => {
        forgetBatch = undefined
        if (forgotten.length > 0 && alive && helper.connected) helper.send({ forget: takeForgotten() })
      }, forgetBatchMs).unref()
    },
    close: () => {
      if (!alive) return Promise.resolve()
      // The launcher still starts what it has already received: the launches in flight are settled
      // once it has exited and every pid line is read, so a started one is known (and killed).
      closing = true
      isReady = false
      helper.ref()
      ;(helper.stdout as Socket).ref()
      clearTimeout(forgetBatch)
      // The groups it still guards are the host's to end (or to leave running): none is killed.
      if (helper.connected) helper.send({ goodbye: true })
      // Not killed at once: it still writes the pid lines of what it started, so the host knows
      // those groups. (One waiting for a handle's acknowledgement does not see the disconnect: it is
      // killed after the bound.)
      if (helper.connected) helper.disconnect()
      // A launcher that does not exit in time (stopped) is killed.
      const force = setTimeout(() => helper.kill("SIGKILL"), exitBoundMs)
      return ended.finally(() => clearTimeout(force))
    }
  }
}

interface LauncherMessage {
  readonly ready?: true
  readonly id?: number
  readonly pid?: number
  readonly exit?: readonly [number | null, NodeJS.Signals | null]
  readonly error?: { readonly code?: string | null; readonly message: string }
}
