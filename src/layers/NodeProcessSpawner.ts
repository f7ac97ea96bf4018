/**
 * The `ProcessSpawner` port over `node:child_process`: `bash -c` as the leader of a new session and
 * process group, zombie-aware liveness from `/proc`, and a host `exit` hook that SIGKILLs every
 * group still tracked.
 *
 * @since 0.1.0
 */
import * as NodeStream from "@effect/platform-node/NodeStream"
import { Deferred, Effect, Layer, Stream } from "effect"
import * as ChildProcess from "node:child_process"
import * as NodeFs from "node:fs"
import type { Readable } from "node:stream"
import type { GroupSignal, ProcessExit, SpawnOptions } from "../services/ProcessSpawner.js"
import { ProcessSpawner, SpawnError } from "../services/ProcessSpawner.js"

const errnoCode = (error: unknown): string | undefined =>
  typeof error === "object" && error !== null && "code" in error && typeof error.code === "string"
    ? error.code
    : undefined

/**
 * Sends `signal` to every member of group `pgid`. A vanished group (ESRCH) is not an error, nor is a
 * group whose remaining members we may not signal (EPERM: e.g. a setuid program); the liveness
 * check still sees those, and the kill path stays bounded by its grace.
 *
 * @since 0.1.0
 */
export const signalGroupSync = (pgid: number, signal: GroupSignal): void => {
  try {
    process.kill(-pgid, signal)
  } catch (error) {
    const code = errnoCode(error)
    if (code !== "ESRCH" && code !== "EPERM") throw error
  }
}

// `/proc/<pid>/stat` is `pid (comm) state ppid pgrp ...`; comm may contain spaces and parentheses.
const statOf = (pid: string): { readonly state: string; readonly ppid: number; readonly pgrp: number } | undefined => {
  try {
    const stat = NodeFs.readFileSync(`/proc/${pid}/stat`, "latin1")
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
    return { state: fields[0] ?? "", ppid: Number(fields[1]), pgrp: Number(fields[2]) }
  } catch {
    return undefined
  }
}

const pidEntries = (): ReadonlyArray<string> =>
  NodeFs.readdirSync("/proc").filter((entry) => entry.charCodeAt(0) >= 48 && entry.charCodeAt(0) <= 57)

/**
 * Sends `signal` to the members of group `pgid` except its leader (a PID-namespace runner) and the
 * leader's direct children (the namespace's init), so the runner keeps the namespace up while the
 * command inside handles the signal. Vanished members are not an error.
 *
 * @since 0.1.0
 */
export const signalNamespaceMembersSync = (pgid: number, signal: GroupSignal): void => {
  for (const entry of pidEntries()) {
    const pid = Number(entry)
    if (pid === pgid) continue
    const stat = statOf(entry)
    if (stat === undefined || stat.pgrp !== pgid || stat.ppid === pgid) continue
    try {
      process.kill(pid, signal)
    } catch (error) {
      const code = errnoCode(error)
      if (code !== "ESRCH" && code !== "EPERM") throw error
    }
  }
}

/**
 * Whether any member of group `pgid` is alive. `kill(-pgid, 0)` succeeds for zombies, so on Linux a
 * positive answer is confirmed by finding a member in `/proc` whose state is not `Z`/`X`.
 *
 * @since 0.1.0
 */
export const groupAliveSync = (pgid: number): boolean => {
  try {
    process.kill(-pgid, 0)
  } catch (error) {
    if (errnoCode(error) !== "EPERM") return false
  }
  if (process.platform !== "linux") return true
  for (const entry of pidEntries()) {
    const stat = statOf(entry)
    if (stat !== undefined && stat.pgrp === pgid && stat.state !== "Z" && stat.state !== "X") return true
  }
  return false
}

const spawnFailure = (error: unknown, options: SpawnOptions): SpawnError => {
  const code = errnoCode(error)
  // Node reports a missing cwd as `spawn bash ENOENT`, blaming bash; say what is really missing.
  const message = code === "ENOENT" && !NodeFs.existsSync(options.cwd)
    ? `workdir does not exist: ${options.cwd} (ENOENT)`
    : error instanceof Error ? error.message : String(error)
  return new SpawnError({ code, message, cause: error })
}

// A pipe read error ends the stream: the bytes read so far are kept and the settle logic goes on.
const readPipe = (readable: Readable): Stream.Stream<Uint8Array> =>
  NodeStream.fromReadable<unknown, Uint8Array>(() => readable, (error) => error).pipe(
    Stream.catchAll((error) =>
      Stream.fromEffect(Effect.logDebug("pipe read failed", error)).pipe(Stream.drain)
    )
  )

const make = Effect.gen(function*() {
  const tracked = new Set<number>()
  const killTracked = () => {
    for (const pgid of tracked) {
      try {
        signalGroupSync(pgid, "SIGKILL")
      } catch {
        // Best effort while the host is exiting.
      }
    }
  }
  // Only `exit` is hooked: signal handling stays the host's (NodeRuntime.runMain interrupts on
  // SIGINT/SIGTERM and our finalizers run); this catches `process.exit()` and plain returns.
  yield* Effect.acquireRelease(
    Effect.sync(() => process.on("exit", killTracked)),
    () => Effect.sync(() => process.off("exit", killTracked))
  )

  const spawn = (options: SpawnOptions) =>
    Effect.acquireRelease(
      Effect.async<ChildProcess.ChildProcess, SpawnError>((resume) => {
        // --norc: bash sources ~/.bashrc when stdin is a socket, as Node's stdin pipe is.
        const bash = ["bash", "--norc", "--noprofile", "-c", options.command]
        const [file, ...args] = options.wrapper === undefined ? bash : [...options.wrapper.argv, ...bash]
        const child = ChildProcess.spawn(file!, args, {
          cwd: options.cwd,
          env: options.env,
          detached: true,
          stdio: [options.stdin === undefined ? "ignore" : "pipe", "pipe", "pipe"]
        })
        child.once("error", (error) => resume(Effect.fail(spawnFailure(error, options))))
        child.once("spawn", () => {
          if (child.pid !== undefined) tracked.add(child.pid)
          if (options.stdin !== undefined && child.stdin) {
            // The command may exit without reading its input: EPIPE is expected, not a fault.
            child.stdin.on("error", () => {})
            child.stdin.end(options.stdin)
          }
          resume(Effect.succeed(child))
        })
      }),
      (child) =>
        Effect.sync(() => {
          if (child.pid !== undefined) tracked.delete(child.pid)
          child.stdout?.destroy()
          child.stderr?.destroy()
          child.stdin?.destroy()
        })
    ).pipe(
      Effect.flatMap((child) =>
        Effect.gen(function*() {
          const exited = yield* Deferred.make<ProcessExit>()
          const settle = (exitCode: number | null, signal: NodeJS.Signals | null) =>
            Deferred.unsafeDone(exited, Effect.succeed({ exitCode, signal }))
          if (child.exitCode !== null || child.signalCode !== null) settle(child.exitCode, child.signalCode)
          else child.once("exit", settle)
          const pid = child.pid!
          return {
            pid,
            stdout: readPipe(child.stdout!),
            stderr: readPipe(child.stderr!),
            exit: Deferred.await(exited),
            signalGroup: (signal: GroupSignal) =>
              Effect.sync(() =>
                signal === "SIGTERM" && options.wrapper?.pidNamespace === true
                  ? signalNamespaceMembersSync(pid, signal)
                  : signalGroupSync(pid, signal)
              ),
            groupAlive: Effect.sync(() => groupAliveSync(pid))
          }
        })
      )
    )

  return ProcessSpawner.of({ spawn })
})

/**
 * The Node implementation of `ProcessSpawner`.
 *
 * @since 0.1.0
 */
export const NodeProcessSpawner = {
  /** Needs nothing but Node; the `exit` hook lives as long as the layer. */
  layer: Layer.scoped(ProcessSpawner, make)
} as const
