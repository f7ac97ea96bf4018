/**
 * The host's side of the pre-forked launcher: a small Node process (its program and protocol are
 * `launcherMain.ts`), started once per spawner layer, that spawns commands on the host's behalf and
 * hands each child's stdout and stderr to the host over its IPC channel (the descriptors themselves,
 * so no byte is copied on the way). A fork copies the page tables of the process that forks: the
 * host's heap grows with its work, the launcher's stays small, so each spawn costs the host an IPC
 * message instead of a fork.
 *
 * The launcher only executes what the host decided (argv, env, cwd, stdio kinds, stdin and script
 * text): process groups, kills and liveness stay the host's, by pid, as for a direct spawn. One duty
 * is the launcher's: if the host dies, it kills the groups it started that the host has not
 * forgotten; it is their reaper, as the `HostReaper` is for the host's own spawns. Until the
 * launcher is ready, and after it died, the spawner spawns directly.
 *
 * @internal
 */
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import type * as Runtime from "effect/Runtime"
import * as ChildProcess from "node:child_process"
import { EventEmitter } from "node:events"
import type { Socket } from "node:net"
import * as NodeOs from "node:os"
import { Readable } from "node:stream"
import type { HostMessage, LaunchMessage, LauncherMessage } from "./launcherMain.js"
import { afterMillis, whenDone } from "../whenDone.js"
import { isGone, isStopped } from "./procStat.js"

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
 * How a launch ends for its caller:
 * - `Launched`: the child, with both its pipes.
 * - `SpawnFailed`: no process started, as Node reported it in the launcher.
 * - `LauncherGone`: the launcher died (or was closed: `closed`) before handing the child over; `pid`
 *   when it had started the child, whose group the host then kills. Without one no command ran: the
 *   gate kept it waiting.
 * - `PipesLost`: the command ran but its pipes did not reach the host (a host out of descriptors
 *   drops them): it has exited, with `exit`, and its output is lost. `pid` when known, for its group.
 */
export type LaunchResult = Data.TaggedEnum<{
  Launched: { readonly child: LaunchedChild }
  SpawnFailed: { readonly code: string | undefined; readonly message: string }
  LauncherGone: { readonly pid: number | undefined; readonly closed: boolean }
  PipesLost: { readonly pid: number | undefined; readonly exit: readonly [number | null, NodeJS.Signals | null] }
}>

/** The constructors of {@link LaunchResult}. */
export const LaunchResult = Data.taggedEnum<LaunchResult>()

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
   * Starts `request`; `started` is called once, with its {@link LaunchResult}.
   */
  readonly launch: (request: LaunchRequest, started: Pending["started"]) => void
  /**
   * Whether the launcher kills the groups it started if the host dies (until each is forgotten):
   * true until it has exited (`onReaperExit` is told then: the `HostReaper` takes its groups over).
   */
  readonly reaps: () => boolean
  /** The launcher's pid (undefined if it never started): the `HostReaper` resumes it if it was stopped. */
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
// only 20 ms longer than the `HostReaper` would (Linux hands out pids in turn; `pid_max` can be 32768).
const forgetBatchMs = 20

/**
 * Spawns the launcher's program `entry` (see `launcherEntry.ts`); `extraStdio` are its stdio entries
 * from fd 3 on (the host's inherited descriptors masked), but fd 3 is its channel; `gate`, the text
 * of its gate file. Hand it to {@link startLauncher} in the same tick, before its events fire.
 */
export const spawnLauncher = (
  entry: string,
  extraStdio: ReadonlyArray<"ignore" | number>,
  gate: string
): ChildProcess.ChildProcess => {
  // A small heap is the point: no compiler threads or large young generation are needed here.
  const args = [
    "--single-threaded",
    "--max-semi-space-size=1",
    entry,
    gate,
    NodeOs.tmpdir()
  ]
  return ChildProcess.spawn(process.execPath, args, {
    cwd: "/",
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin" },
    detached: true,
    stdio: ["pipe", "pipe", "ignore", "ipc", ...extraStdio.slice(1)],
    serialization: "json"
  })
}

/**
 * The host's side of the launcher process `helper` (from {@link spawnLauncher}). Its bounds and polls
 * are sleeps of `runtime`'s Clock. `onGone` is told once if it dies while in use, once the launches
 * in flight are settled; `onReaperExit`, with its pid, as soon as it has exited (unless closed).
 */
export const startLauncher = (
  helper: ChildProcess.ChildProcess,
  runtime: Runtime.Runtime<never>,
  onGone: (reason: string) => void,
  onReaperExit: (pid: number) => void
): Launcher => {
  let isReady = false
  let alive = true
  let nextId = 0
  let sentEnv: Readonly<Record<string, string>> | undefined
  // Groups gone since the last message, and what cancels their send if a launch comes first.
  let forgotten: Array<number> = []
  let forgetBatch: (() => void) | undefined
  const takeForgotten = () => {
    const taken = forgotten
    forgotten = []
    return taken
  }
  const pending = new Map<number, Pending>()
  let reportStarted: (ready: boolean) => void = () => {}
  const started = new Promise<boolean>((resolve) => {
    // One that is not ready in time is not waited for (the host spawns until it is).
    const stopBound = afterMillis(runtime, readyBoundMs, () => resolve(false))
    reportStarted = (ready) => {
      stopBound()
      resolve(ready)
    }
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
  const reaping = () => alive && !closing && !exited
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
        entry.started(LaunchResult.LauncherGone({ pid: entry.pid, closed }))
        continue
      }
      if (child.stderr === null) {
        child.stderr = Readable.from([])
        entry.started(LaunchResult.Launched({ child }))
      }
      const poll = Effect.repeat(Effect.sleep(orphanPollMs), { until: () => isGone(child.pid) })
      whenDone(runtime, poll, () => child.settle(null, null))
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
    if (!closing) onReaperExit(helper.pid!)
    exitReason = `launcher exited (${signal ?? `code ${code}`})`
    if (linesEnded) return gone(exitReason)
    // Another process holding the launcher's stdout (a command of the same user can take it with
    // pidfd_getfd) keeps it from ending: what the launcher wrote is in the pipe already, so it is
    // read (the I/O turn comes before the immediate) and the end is not waited for any longer.
    afterMillis(runtime, linesBoundMs, () => setImmediate(() => helper.stdout!.destroy()))
  })

  helper.on("message", (message: LauncherMessage, handle?: Readable) => {
    if (message._tag === "Ready") {
      isReady = alive
      reportStarted(alive)
      return
    }
    const entry = pending.get(message.id)
    if (entry === undefined) {
      handle?.destroy()
      return
    }
    switch (message._tag) {
      case "SpawnFailed":
        pending.delete(message.id)
        setBusy()
        return entry.started(LaunchResult.SpawnFailed({ code: message.code, message: message.message }))
      case "Started":
        entry.pid = message.pid
        if (handle !== undefined) entry.child = new LaunchedChild(message.pid, handle)
        return
      case "Stderr":
        if (handle === undefined || entry.child === undefined) return handle?.destroy()
        entry.child.stderr = handle
        return entry.started(LaunchResult.Launched({ child: entry.child }))
      case "Exited": {
        pending.delete(message.id)
        setBusy()
        // An exit before both pipes arrived: one was lost on the way, and the call says so.
        const child = entry.child
        if (child === undefined || child.stderr === null) {
          child?.stdout.destroy()
          return entry.started(LaunchResult.PipesLost({ pid: entry.pid, exit: message.exit }))
        }
        return child.settle(message.exit[0], message.exit[1])
      }
      default:
        // A launcher of another version: nothing of it is taken.
        return handle?.destroy()
    }
  })

  return {
    ready: () => isReady,
    started,
    launch: (request, started) => {
      const id = nextId++
      const look = () => {
        if (helper.pid !== undefined && isStopped(helper.pid)) helper.kill("SIGKILL")
        else stopLooking = afterMillis(runtime, startBoundMs, look)
      }
      let stopLooking = afterMillis(runtime, startBoundMs, look)
      pending.set(id, {
        started: (result) => {
          stopLooking()
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
      const message: LaunchMessage = env === sentEnv
        ? { _tag: "Launch", id, ...rest, ...input, ...forget }
        : { _tag: "Launch", id, ...rest, ...input, ...forget, env }
      helper.send(message)
      sentEnv = env
    },
    reaps: reaping,
    pid: helper.pid,
    forget: (pgid) => {
      if (!reaping()) return
      forgotten.push(pgid)
      forgetBatch ??= afterMillis(runtime, forgetBatchMs, () => {
        forgetBatch = undefined
        if (forgotten.length > 0 && alive && helper.connected) {
          helper.send({ _tag: "Forget", forget: takeForgotten() } satisfies HostMessage)
        }
      })
    },
    close: () => {
      if (!alive) return Promise.resolve()
      // The launcher still starts what it has already received: the launches in flight are settled
      // once it has exited and every pid line is read, so a started one is known (and killed).
      closing = true
      isReady = false
      helper.ref()
      ;(helper.stdout as Socket).ref()
      forgetBatch?.()
      // The groups it is still the reaper of are the host's to end (or to leave running): none is killed.
      if (helper.connected) helper.send({ _tag: "Goodbye" } satisfies HostMessage)
      // Not killed at once: it still writes the pid lines of what it started, so the host knows
      // those groups. (One waiting for a handle's acknowledgement does not see the disconnect: it is
      // killed after the bound.)
      if (helper.connected) helper.disconnect()
      // A launcher that does not exit in time (stopped) is killed.
      const stopForcing = afterMillis(runtime, exitBoundMs, () => helper.kill("SIGKILL"))
      return ended.finally(stopForcing)
    }
  }
}
