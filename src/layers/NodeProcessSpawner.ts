/**
 * The `ProcessSpawner` port over `node:child_process`: `bash -c` as the leader of a new session and
 * process group (a command too long for argv goes over fd 3), spawned by a pre-forked launcher or
 * by the host itself, zombie-aware liveness from `/proc`,
 * a host `exit` hook that SIGKILLs every group still tracked, and, if the host dies without running
 * any code, the launcher (for the groups it started) or a {@link HostReaper} (for the others) doing
 * the same.
 *
 * @since 0.1.0
 */
import { Cause, Data, Deferred, Effect, FiberId, FiberRef, Layer, Runtime, Scope } from "effect"
import * as ChildProcess from "node:child_process"
import * as NodeFs from "node:fs"
import type { Readable, Writable } from "node:stream"
import { ProcessSpawner, SpawnError } from "../services/ProcessSpawner.js"
import { capEchoed } from "../services/internal/requestChecks.js"
import { HostReaper } from "../services/HostReaper.js"
import * as HostReaperLive from "./HostReaper.js"
import { inheritedDescriptorsSync, maskInherited } from "./internal/spawner/inheritedDescriptors.js"
import { groupLiveness, pidEntries, statOf } from "./internal/spawner/groupLiveness.js"
import { gateBashEnv, gateScript, gateServes } from "./internal/spawner/gate.js"
import type { LaunchedChild, LaunchResult } from "./internal/spawner/Launcher.js"
import { startLauncher } from "./internal/spawner/Launcher.js"
import { findLauncherEntry } from "./internal/spawner/launcherEntry.js"
import { holdPipe, PipeReader } from "./internal/spawner/readPipes.js"

/** A child spawned by the host (`Direct`), or by its launcher (`Launched`). */
type SpawnedChild = Data.TaggedEnum<{
  Direct: { readonly child: ChildProcess.ChildProcess }
  Launched: { readonly child: LaunchedChild }
}>
const SpawnedChild = Data.taggedEnum<SpawnedChild>()

const errnoCode = (error: unknown): string | undefined =>
  typeof error === "object" && error !== null && "code" in error && typeof error.code === "string"
    ? error.code
    : undefined

/**
 * Sends `signal` to every member of group `pgid`. A vanished group (ESRCH) is not an error, nor is a
 * group whose remaining members we may not signal (EPERM: e.g. a setuid program); the liveness
 * check still sees those, and the kill path stays bounded by its grace.
 */
const signalGroupSync = (pgid: number, signal: ProcessSpawner.GroupSignal): void => {
  try {
    process.kill(-pgid, signal)
  } catch (error) {
    const code = errnoCode(error)
    if (code !== "ESRCH" && code !== "EPERM") throw error
  }
}

/**
 * Sends `signal` to the members of group `pgid` except its leader (a PID-namespace runner) and the
 * leader's direct children (the namespace's init), so the runner keeps the namespace up while the
 * command inside handles the signal. Vanished members are not an error.
 */
const signalNamespaceMembersSync = (pgid: number, signal: ProcessSpawner.GroupSignal): void => {
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

const spawnFailure = (error: unknown, options: ProcessSpawner.Options): SpawnError => {
  const code = errnoCode(error)
  // Node reports a missing cwd as `spawn bash ENOENT`, blaming bash; say what is really missing.
  const message = code === "ENOENT" && !NodeFs.existsSync(options.cwd)
    ? `workdir does not exist: ${capEchoed(options.cwd)} (ENOENT)`
    : error instanceof Error ? error.message : String(error)
  return new SpawnError({ code, message, cause: error })
}

/**
 * Commands up to this many bytes go to bash as its `-c` argument; longer ones would hit the kernel's
 * per-argument limit (`MAX_ARG_STRLEN`, 128 KiB: `spawn E2BIG`) and are passed over fd 3 instead.
 */
const longScriptBytes = 64 * 1024

/**
 * Reads the whole script from fd 3 with builtins only (`PATH` is the caller's), closes fd 3 so the
 * command's children never inherit it, and runs the script in the same shell, so `$0`, `exit` and
 * traps behave as under `-c` (a syntax error is reported as `eval` rather than `-c`).
 */
const readScriptFromFd3 = "IFS= read -r -d '' -u 3 __effect_bash_script; exec 3<&-; " +
  "eval \"unset __effect_bash_script; $__effect_bash_script\""

/**
 * bash's argv for `command`, and the script to write to fd 3 when it is too long for argv. `--`
 * ends bash's options, so a command starting with `-` (`--version`, `-O extglob`) is a command.
 */
const shellInvocation = (command: string): { readonly args: ReadonlyArray<string>; readonly script?: string } =>
  Buffer.byteLength(command) <= longScriptBytes
    ? { args: ["--norc", "--noprofile", "-c", "--", command] }
    : { args: ["--norc", "--noprofile", "-c", "--", readScriptFromFd3], script: command }

const pipesLostMessage = ({ exit: [code, signal] }: Data.TaggedEnum.Value<LaunchResult, "PipesLost">): string =>
  `the command ran (${signal === null ? `exit code ${code}` : `killed by ${signal}`}), but the launcher could not ` +
  "hand its output over (is the host out of file descriptors?): its output is lost"

const strandedMessage = (gone: Data.TaggedEnum.Value<LaunchResult, "LauncherGone">): string =>
  gone.closed
    ? gone.pid === undefined
      ? "the spawner closed before the command started"
      : "the spawner closed before the command was handed over (its group was killed)"
    : gone.pid === undefined
    ? "the launcher exited before the command started"
    : "the launcher exited before handing the command over (a group it had started was killed)"

const make = (settings: { readonly launcher: boolean }) => Effect.gen(function*() {
  const reaper = yield* HostReaper
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

  // Inherited descriptors reach no command: each is replaced by /dev/null in the child (a dup2
  // there), as the launcher's own are for the commands it starts. Hosts that inherited none spawn
  // exactly as before. The /dev/null descriptor (close-on-exec, as Node opens every file) and the
  // stdio lists are the layer's: made once.
  const inherited = inheritedDescriptorsSync()
  // `derive` of the last call's env, made again only for a different env object (the executor's are
  // frozen and repeat).
  const forLastEnv = <A>(derive: (env: Readonly<Record<string, string>>) => A) => {
    let last: { readonly env: Readonly<Record<string, string>>; readonly value: A } | undefined
    return (env: Readonly<Record<string, string>>): A => {
      if (last?.env !== env) last = { env, value: derive(env) }
      return last.value
    }
  }
  const withGate = forLastEnv((env) => ({ ...env, BASH_ENV: gateBashEnv }))
  const keepsGate = forLastEnv(gateServes)
  const devNull = inherited.length === 0 ? undefined : yield* Effect.acquireRelease(
    Effect.sync(() => NodeFs.openSync("/dev/null", "r")),
    (fd) => Effect.sync(() => NodeFs.closeSync(fd))
  )
  const masked = devNull === undefined ? [] : maskInherited(inherited, devNull)
  // Node reads these lists and never changes them.
  const stdioLists = (extra: ReadonlyArray<"ignore" | number>) =>
    [false, true].map((stdin) =>
      [false, true].map((script): Array<"pipe" | "ignore" | number> => [
        stdin ? "pipe" : "ignore",
        "pipe",
        "pipe",
        ...(script ? ["pipe" as const, ...extra.slice(1)] : extra)
      ])
    )
  const maskedLists = stdioLists(masked)
  const plainLists = stdioLists([])
  const stdioFor = (lists: typeof plainLists, stdin: boolean, script: boolean) =>
    lists[stdin ? 1 : 0]![script ? 1 : 0]!

  // `stdio` with a pipe at `fd` (4 or more), for a runner's input: it replaces a masked descriptor
  // there, which the runner closes after reading.
  const withInputPipe = (stdio: ReadonlyArray<"pipe" | "ignore" | number>, fd: number) => {
    if (!Number.isSafeInteger(fd) || fd < 4) throw new Error(`a runner's input needs a descriptor of 4 or more, got ${fd}`)
    const list = [...stdio]
    while (list.length <= fd) list.push("ignore")
    list[fd] = "pipe"
    return list
  }

  // The groups the launcher kills if the host dies (see `guard`); the watchdog takes them over if
  // the launcher dies first.
  const guardedByLauncher = new Set<number>()
  // The launcher gets the host's inherited descriptors masked, once; its children then inherit
  // /dev/null at those numbers, as a direct spawn's masked list gives them.
  const runtime = yield* Effect.runtime<never>()
  // A package built or bundled without the launcher's program is broken: the layer dies naming it.
  const entry = settings.launcher ? yield* Effect.orDie(findLauncherEntry()) : undefined
  const launcher = entry === undefined ? undefined : yield* Effect.acquireRelease(
    Effect.sync(() =>
      startLauncher(
        entry,
        masked,
        gateScript(inherited),
        (reason) =>
          Runtime.runFork(runtime)(Effect.logWarning(`${reason}; commands are spawned by the host from now on`)),
        // The groups it guarded go to the watchdog, which forgets the launcher itself.
        (launcherPid) => {
          const orphaned = [...guardedByLauncher]
          guardedByLauncher.clear()
          Runtime.runSync(runtime)(
            Effect.forEach(orphaned, reaper.track, { discard: true }).pipe(Effect.zipRight(reaper.forget(launcherPid)))
          )
        }
      )
    ),
    // Bounded by the launcher itself (killed when it does not exit in time), on any clock.
    (launcher) => Effect.promise(() => launcher.close())
  )
  // A command can stop the launcher (its parent): if the host dies, the watchdog resumes it first.
  if (launcher?.pid !== undefined) yield* reaper.resumeOnDeath(launcher.pid)
  // Ready with the layer, so every call takes the same way (bounded by the launcher itself).
  if (launcher !== undefined) yield* Effect.promise(() => launcher.started)

  // The launched child, once it has reported both pipes: read from then on, like a direct spawn's.
  // A launch the launcher died with before it started the child is spawned by the host instead
  // (`direct`), unless its caller was interrupted meanwhile: the gate kept any command from running
  // before the host had its pid.
  const launched = (
    options: ProcessSpawner.Options,
    resume: (effect: Effect.Effect<SpawnedChild, SpawnError>) => void,
    direct: () => void,
    interrupted: () => boolean
  ) =>
  (result: LaunchResult) => {
    switch (result._tag) {
      case "Launched": {
        const child = result.child
        holdPipe(child.stdout)
        holdPipe(child.stderr!)
        tracked.add(child.pid)
        return resume(Effect.succeed(SpawnedChild.Launched({ child })))
      }
      case "SpawnFailed":
        return resume(
          Effect.fail(spawnFailure(Object.assign(new Error(result.message), { code: result.code }), options))
        )
      case "PipesLost":
        // Members it left behind are killed: the host cannot watch a group without its pipes.
        if (result.pid !== undefined) {
          signalGroupSync(result.pid, "SIGKILL")
          launcher?.forget(result.pid)
        }
        return resume(Effect.fail(new SpawnError({ code: undefined, message: pipesLostMessage(result) })))
      case "LauncherGone":
        if (result.pid === undefined && !result.closed && !interrupted()) return direct()
        // Started but never handed over: its group is killed, so no command runs unowned.
        if (result.pid !== undefined) signalGroupSync(result.pid, "SIGKILL")
        return resume(Effect.fail(new SpawnError({ code: undefined, message: strandedMessage(result) })))
    }
  }

  // The host's own spawn: the way when the launcher cannot serve (or is not used).
  const spawnDirect = (
    options: ProcessSpawner.Options,
    shell: ReturnType<typeof shellInvocation>,
    file: string,
    args: ReadonlyArray<string>,
    resume: (effect: Effect.Effect<SpawnedChild, SpawnError>) => void
  ): void => {
    const input = options.wrapper?.input
    let child: ChildProcess.ChildProcess
    try {
      const stdio = stdioFor(maskedLists, options.stdin !== undefined, shell.script !== undefined)
      child = ChildProcess.spawn(file, args, {
        cwd: options.cwd,
        detached: true,
        env: options.env,
        stdio: input === undefined ? stdio : withInputPipe(stdio, input.fd)
      })
    } catch (error) {
      // Node throws at once for values it refuses (a NUL byte in cwd or env); a spawn failure too.
      return resume(Effect.fail(spawnFailure(error, options)))
    }
    // Read from this tick on: output of a command that exits before its reader starts is kept.
    holdPipe(child.stdout as Readable)
    holdPipe(child.stderr as Readable)
    // A child without a pid was never started: Node reports why in an `error` event on the next
    // tick. With a pid it runs already, and its pipes are open to write.
    if (child.pid === undefined) {
      child.once("error", (error) => resume(Effect.fail(spawnFailure(error, options))))
      return
    }
    tracked.add(child.pid)
    // A started child reports no more errors here (no IPC, no `child.kill`); none may crash the host.
    child.on("error", () => {})
    // The command may exit without reading its input: EPIPE is expected, not a fault.
    if (options.stdin !== undefined && child.stdin) {
      child.stdin.on("error", () => {})
      child.stdin.end(options.stdin)
    }
    const inputPipe = input === undefined ? undefined : child.stdio[input.fd] as Writable | null | undefined
    if (input !== undefined && inputPipe) {
      inputPipe.on("error", () => {})
      inputPipe.end(input.bytes)
    }
    const scriptPipe = child.stdio[3] as Writable | null | undefined
    if (shell.script !== undefined && scriptPipe) {
      scriptPipe.on("error", () => {})
      scriptPipe.end(shell.script)
    }
    resume(Effect.succeed(SpawnedChild.Direct({ child })))
  }

  // The spawn is uninterruptible: an interruption of its caller waits, recorded, until it is over.
  const start = (options: ProcessSpawner.Options) =>
    Effect.withFiberRuntime<SpawnedChild, SpawnError>((fiber) =>
      Effect.async<SpawnedChild, SpawnError>((resume) => {
        // Node refuses a NUL byte in an argument, and fd 3's reader would stop at one: refuse both alike.
        if (options.command.includes("\0")) {
          return resume(Effect.fail(new SpawnError({ code: undefined, message: "command contains a NUL byte" })))
        }
        // --norc: bash sources ~/.bashrc when stdin is a socket, as Node's stdin pipe is.
        const shell = shellInvocation(options.command)
        const bash = ["bash", ...shell.args]
        const [file, ...args] = options.wrapper === undefined ? bash : [...options.wrapper.argv, ...bash]
        const direct = () => spawnDirect(options, shell, file!, args, resume)
        const interrupted = () => !Cause.isEmpty(fiber.getFiberRef(FiberRef.interruptedCause))
        // The gate is bash's: a runner, or an env that would skip or change it, takes the direct way.
        if (launcher?.ready() === true && options.wrapper === undefined && keepsGate(options.env)) {
          return launcher.launch({
            file: file!,
            args,
            cwd: options.cwd,
            env: withGate(options.env),
            stdio: stdioFor(plainLists, options.stdin !== undefined, shell.script !== undefined) as Array<"pipe" | "ignore">,
            stdin: options.stdin,
            script: shell.script
          }, launched(options, resume, direct, interrupted))
        }
        direct()
      })
    ).pipe(Effect.tap(guard))

  // If the host dies, a group the launcher started and still lives is killed by the launcher; any
  // other, by the watchdog. Either way, once the group is gone it is forgotten.
  const guard = (spawned: SpawnedChild) =>
    Effect.suspend(() => {
      const pid = spawned.child.pid!
      if (spawned._tag === "Direct" || launcher?.guards() !== true) return reaper.track(pid)
      guardedByLauncher.add(pid)
      return Effect.void
    })

  const release = (spawned: SpawnedChild) =>
    Effect.suspend(() => {
      const pid = spawned.child.pid!
      tracked.delete(pid)
      for (const stream of spawned.child.stdio) stream?.destroy()
      if (!guardedByLauncher.delete(pid)) return reaper.forget(pid)
      launcher?.forget(pid)
      return Effect.void
    })

  // `acquireRelease` without its fiber-ref bookkeeping: the release needs none of the caller's refs.
  const spawn = (options: ProcessSpawner.Options) =>
    Effect.flatMap(Effect.scope, (scope) =>
      Effect.uninterruptible(
        Effect.tap(start(options), (child) => Scope.addFinalizer(scope, release(child)))
      )).pipe(
      Effect.map((spawned) => {
        const child = spawned.child
        const exited = Deferred.unsafeMake<ProcessSpawner.Exit>(FiberId.none)
        let result: ProcessSpawner.Exit | undefined
        let listeners: Array<(exit: ProcessSpawner.Exit) => void> = []
        const settle = (exitCode: number | null, signal: NodeJS.Signals | null) => {
          const exit = { exitCode, signal }
          result = exit
          Deferred.unsafeDone(exited, Effect.succeed(exit))
          const waiting = listeners
          listeners = []
          for (const listener of waiting) listener(exit)
        }
        const alreadyExited = child.exitCode !== null || child.signalCode !== null ||
          (spawned._tag === "Launched" && spawned.child.exited)
        if (alreadyExited) settle(child.exitCode, child.signalCode)
        else if (spawned._tag === "Launched") spawned.child.once("exit", settle)
        else spawned.child.once("exit", settle)
        const pid = child.pid!
        return {
          pid,
          openPipes: (sinks: ProcessSpawner.OutputSinks) =>
            new PipeReader({ stdout: child.stdout as Readable, stderr: child.stderr as Readable }, sinks),
          exit: Deferred.await(exited),
          onExit: (listener: (exit: ProcessSpawner.Exit) => void) => {
            if (result !== undefined) {
              listener(result)
              return () => {}
            }
            listeners.push(listener)
            return () => {
              listeners = listeners.filter((each) => each !== listener)
            }
          },
          signalGroup: (signal: ProcessSpawner.GroupSignal) =>
            Effect.sync(() =>
              signal === "SIGTERM" && options.wrapper?.pidNamespace === true
                ? signalNamespaceMembersSync(pid, signal)
                : signalGroupSync(pid, signal)
            ),
          groupAlive: Effect.sync(groupLiveness(pid))
        }
      })
    )

  return ProcessSpawner.of({ spawn })
})

const layerOf = (options: { readonly launcher: boolean }): Layer.Layer<ProcessSpawner | HostReaper> =>
  Layer.scoped(ProcessSpawner, make(options)).pipe(Layer.provideMerge(HostReaperLive.layer))

/**
 * The Node implementation of `ProcessSpawner`: commands are spawned by a pre-forked launcher
 * process whenever it can serve, else by the host. Provides the {@link HostReaper} too.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer: Layer.Layer<ProcessSpawner | HostReaper> = layerOf({ launcher: true })

/**
 * The Node implementation of `ProcessSpawner` without the launcher: every command is spawned by the
 * host itself (the executors' `directSpawn` setting).
 *
 * @since 0.1.0
 * @category layers
 */
export const layerDirectSpawn: Layer.Layer<ProcessSpawner | HostReaper> = layerOf({ launcher: false })
