/**
 * The reaper for hosts that die without running finalizers (SIGKILL, the OOM killer, SIGHUP of a
 * host that does not handle it): a tiny `bash` process, in its own session, that reads one line per
 * event from a pipe held by the host. It learns each process group as it starts and forgets it
 * once it is gone; when the pipe closes without a goodbye — the host died — it SIGKILLs every group
 * it still knows and removes the directories it was given.
 *
 * One small write per spawn and per settle, no round trip.
 * The process starts on `start`, at the latest with the first line it is sent; if it cannot start or
 * dies, the layer keeps working without it (a warning says so).
 *
 * @internal
 */
import type * as Context from "effect/Context"
import type * as Scope from "effect/Scope"
import * as Effect from "effect/Effect"
import * as Runtime from "effect/Runtime"
import * as ChildProcess from "node:child_process"
import { readFileSync } from "node:fs"
import type { Writable } from "node:stream"
import { HostReaper } from "./HostReaper.js"
import { isStopped } from "./procStat.js"

let script: string | undefined
/**
 * The reaper's program: `reaper.sh` beside this module, read when the reaper first starts; the
 * bundles hold it inline. Lines: `+<pgid>` track, `t<leader> <pts>` track a terminal, `-<pid>`
 * forget (a group or a terminal), `d<path>` remove on death, `q` clean exit. EOF without `q` means
 * the host is gone: the groups are killed, then every process of the terminals (their sessions,
 * their PTYs' holders, and the descendants of those). Signals are ignored: only the pipe decides.
 * Descriptors the host itself inherited without close-on-exec (a terminal, a supervisor's pipe) are
 * closed first.
 */
const reaperScript = (): string => script ??= readFileSync(new URL("./reaper.sh", import.meta.url), "utf8")

// How long a clean close waits for the reaper to read its goodbye and exit.
const exitBoundMs = 1_000

/**
 * The reaper of the current scope, and `start`, which starts its process (once; later calls do
 * nothing). The scope's close tells a started reaper goodbye and waits, bounded, for it to exit.
 */
export const makeReaperProcess: Effect.Effect<
  { readonly reaper: Context.Tag.Service<typeof HostReaper>; readonly start: Effect.Effect<void> },
  never,
  Scope.Scope
> = Effect.gen(function*() {
  const runtime = yield* Effect.runtime<never>()
  const log = (message: string, detail?: unknown) =>
    Runtime.runFork(runtime)(Effect.logWarning(message, ...(detail === undefined ? [] : [detail])))
  let closing = false
  let started:
    | { readonly child: ChildProcess.ChildProcess; readonly stdin: Writable | undefined; readonly exited: Promise<void> }
    | undefined
  let alive = false

  const spawn = () => {
    alive = true
    // Own session (no controlling terminal), stdio not inherited (Node opens every other fd
    // close-on-exec), `/` as cwd so it pins no mount, and no secrets in its environment.
    const child = ChildProcess.spawn("bash", ["--norc", "--noprofile", "-c", reaperScript()], {
      cwd: "/",
      env: { PATH: process.env.PATH ?? "/usr/bin:/bin", LC_ALL: "C" },
      detached: true,
      stdio: ["pipe", "ignore", "ignore"]
    })
    const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()))
    child.once("error", (error) => {
      alive = false
      log("host-death reaper failed to start; commands will outlive a host killed by SIGKILL", error)
    })
    child.once("exit", (code, signal) => {
      alive = false
      if (!closing) {
        log(`host-death reaper exited (${signal ?? `code ${code}`}); commands will outlive a host killed by SIGKILL`)
      }
    })
    // No pipe when the spawn failed at once (no descriptor free): the `error` event says so.
    const stdin = child.stdin ?? undefined
    stdin?.on("error", () => {
      alive = false
    })
    // Neither the reaper nor its pipe keeps the host's event loop alive.
    child.unref()
    ;(stdin as unknown as { unref?: () => void } | undefined)?.unref?.()
    return { child, stdin, exited }
  }
  // Started at most once: a reaper that could not start is not tried again.
  let tried = false
  const ensureStarted = () => {
    if (tried || closing) return started
    tried = true
    try {
      started = spawn()
    } catch (error) {
      alive = false
      log("host-death reaper failed to start; commands will outlive a host killed by SIGKILL", error)
    }
    return started
  }

  const send = (line: string) =>
    Effect.sync(() => {
      const reaper = ensureStarted()
      if (alive && !closing) reaper?.stdin?.write(`${line}\n`)
    })

  yield* Effect.addFinalizer(() =>
    Effect.suspend(() => {
      closing = true
      if (started?.stdin === undefined || !alive) return Effect.void
      started.stdin.end("q\n")
      return Effect.promise(() => started!.exited).pipe(Effect.interruptible, Effect.timeoutOption(exitBoundMs))
    })
  )

  let reportedStop = false
  const resumeIfStopped = Effect.suspend(() => {
    const pid = started?.child.pid
    if (pid === undefined || !alive || closing) return Effect.void
    if (!isStopped(pid)) return Effect.void
    try {
      process.kill(pid, "SIGCONT")
    } catch {
      // Gone meanwhile: its exit is reported.
    }
    if (reportedStop) return Effect.void
    reportedStop = true
    return Effect.logWarning("host-death reaper was stopped; resumed it")
  })

  const reaper = HostReaper.of({
    track: (pgid) => send(`+${pgid}`),
    trackTerminal: (leader, pts) =>
      /^\/dev\/[^\s]+$/.test(pts) ? send(`t${leader} ${pts}`) : Effect.logWarning(`terminal ${leader} not given to the reaper: PTY path ${JSON.stringify(pts)}`),
    forget: (pgid) => send(`-${pgid}`),
    // A path with a newline cannot travel as a line; such a directory is only removed by the layer.
    removeOnDeath: (directory) =>
      directory.includes("\n") ? Effect.logWarning("spill directory not given to the reaper: newline in path") : send(`d${directory}`),
    resumeIfStopped
  })
  return { reaper, start: Effect.sync(ensureStarted) }
})
