/**
 * The layer's launcher: started with the layer's helpers and then awaited by every spawn (not by the
 * layer, whose user goes on while it boots; every call still takes the same way), or on demand and
 * awaited by none (see `NodeProcessSpawner.ts`); closed with the layer; the way a request takes when
 * the launcher can serve it. A launch the launcher died with before it started the child is spawned
 * by the host instead, unless its caller was interrupted meanwhile: the gate kept the command from
 * running before the host had its pid.
 *
 * @internal
 */
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Runtime from "effect/Runtime"
import type { ProcessSpawner } from "../../../services/ProcessSpawner.js"
import { SpawnError } from "../../../services/ProcessSpawner.js"
import { spawnFailure } from "./directSpawn.js"
import { gateBashEnv, gateScript, gateServes } from "./gate.js"
import { signalGroupSync } from "./groupSignals.js"
import type { HostDeath } from "./hostDeath.js"
import type { Launcher, LaunchResult } from "./Launcher.js"
import { spawnLauncher, startLauncher } from "./Launcher.js"
import { findLauncherEntry } from "./launcherEntry.js"
import { holdPipe } from "./readPipes.js"
import type { ShellInvocation } from "./shellInvocation.js"
import { SpawnedChild } from "./spawnedChild.js"
import type { Stdio } from "./stdio.js"

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

/** `derive` of the last call's env, made again only for a different env object (the executor's repeat). */
const forLastEnv = <A>(derive: (env: Readonly<Record<string, string>>) => A) => {
  let last: { readonly env: Readonly<Record<string, string>>; readonly value: A } | undefined
  return (env: Readonly<Record<string, string>>): A => {
    if (last?.env !== env) last = { env, value: derive(env) }
    return last.value
  }
}

export interface LayerLauncher {
  readonly launcher: Launcher
  /** Completes once the launcher is ready, or known not to be (gone, or not ready in time). */
  readonly started: Effect.Effect<void>
  /**
   * Whether the launcher serves `options` now: it is ready, and the command is bash, with an env
   * that keeps the gate working (a runner, or an env that would skip or change the gate, is spawned
   * by the host).
   */
  readonly serves: (options: ProcessSpawner.Options) => boolean
  /** Launches bash (`file`, `args`) for `options`; `direct` spawns it by the host instead. */
  readonly launch: (
    options: ProcessSpawner.Options,
    shell: ShellInvocation,
    file: string,
    args: ReadonlyArray<string>,
    resume: (effect: Effect.Effect<SpawnedChild, SpawnError>) => void,
    direct: () => void,
    interrupted: () => boolean
  ) => void
}

/**
 * Starts the layer's launcher, closed with the scope. The launcher gets the host's inherited
 * descriptors masked, once; its children then inherit /dev/null at those numbers, as a direct
 * spawn's list gives them. Without the launcher's program (an app bundled without it) there is no
 * launcher: a warning names the path, and every command is spawned by the host.
 */
export const startLayerLauncher = (stdio: Stdio, hostDeath: HostDeath) =>
  Effect.gen(function*() {
    const runtime = yield* Effect.runtime<never>()
    const entry = yield* findLauncherEntry().pipe(
      Effect.tapError((missing) => Effect.logWarning(`${missing.message}; commands are spawned by the host`)),
      Effect.option
    )
    if (Option.isNone(entry)) return undefined
    const launcher = yield* Effect.acquireRelease(
      Effect.sync(() =>
        startLauncher(
          spawnLauncher(entry.value, stdio.masked, gateScript(stdio.inherited)),
          runtime,
          (reason) =>
            Runtime.runFork(runtime)(Effect.logWarning(`${reason}; commands are spawned by the host from now on`)),
          hostDeath.launcherExited
        )
      ),
      // Bounded by the launcher itself (killed when it does not exit in time, by the layer's Clock).
      (launcher) => Effect.promise(() => launcher.close())
    )
    if (launcher.pid !== undefined) yield* hostDeath.launcherStarted(launcher.pid)

    const withGate = forLastEnv((env) => ({ ...env, BASH_ENV: gateBashEnv }))
    const keepsGate = forLastEnv(gateServes)

    // The launched child, once it has reported both pipes: read from then on, like a direct spawn's.
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
          hostDeath.track(child.pid)
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
            launcher.forget(result.pid)
          }
          return resume(Effect.fail(new SpawnError({ code: undefined, message: pipesLostMessage(result) })))
        case "LauncherGone":
          if (result.pid === undefined && !result.closed && !interrupted()) return direct()
          // Started but never handed over: its group is killed, so no command runs unowned.
          if (result.pid !== undefined) signalGroupSync(result.pid, "SIGKILL")
          return resume(Effect.fail(new SpawnError({ code: undefined, message: strandedMessage(result) })))
      }
    }

    // Once settled, awaited without a turn of the microtask queue: a spawn then sends its launch
    // within the caller's own run, so the launcher starts on it while the caller's stack unwinds.
    let settled = false
    launcher.started.then(() => {
      settled = true
    })
    const awaitStarted = Effect.asVoid(Effect.promise(() => launcher.started))

    const layerLauncher: LayerLauncher = {
      launcher,
      started: Effect.suspend(() => settled ? Effect.void : awaitStarted),
      serves: (options) => launcher.ready() && options.wrapper === undefined && keepsGate(options.env),
      launch: (options, shell, file, args, resume, direct, interrupted) =>
        launcher.launch({
          file,
          args,
          cwd: options.cwd,
          env: withGate(options.env),
          stdio: stdio.launched(options.stdin !== undefined, shell.script !== undefined),
          stdin: options.stdin,
          script: shell.script
        }, launched(options, resume, direct, interrupted))
    }
    return layerLauncher
  })
