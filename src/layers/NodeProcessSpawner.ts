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
import * as Cause from "effect/Cause"
import * as Context from "effect/Context"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as FiberRef from "effect/FiberRef"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Runtime from "effect/Runtime"
import * as Scope from "effect/Scope"
import { ProcessSpawner, SpawnError } from "../services/ProcessSpawner.js"
import { HostReaper } from "./internal/spawner/HostReaper.js"
import { spawnDirect } from "./internal/spawner/directSpawn.js"
import { makeHostDeath } from "./internal/spawner/hostDeath.js"
import type { LayerLauncher } from "./internal/spawner/layerLauncher.js"
import { startLayerLauncher } from "./internal/spawner/layerLauncher.js"
import { makeReaperProcess } from "./internal/spawner/reaperProcess.js"
import { shellInvocation } from "./internal/spawner/shellInvocation.js"
import type { SpawnedChild } from "./internal/spawner/spawnedChild.js"
import { spawnedProcess } from "./internal/spawner/spawnedProcess.js"
import { makeStdio } from "./internal/spawner/stdio.js"
import { helpersWaitFor } from "./startHelpersAfter.js"

/**
 * When the launcher starts: with the helpers, after the first command without a runner (which the
 * host spawns, as it spawns every command until the launcher is ready), or never.
 */
type LauncherStart = "withHelpers" | "onDemand" | "never"

const make = (settings: { readonly launcher: LauncherStart }) => Effect.gen(function*() {
  const layerScope = yield* Effect.scope
  const { reaper, start: startReaper } = yield* makeReaperProcess
  const hostDeath = yield* makeHostDeath(reaper)
  const stdio = yield* makeStdio
  let launcher: LayerLauncher | undefined

  // The helpers (the reaper, then the launcher, which the reaper resumes if the host dies) start
  // once, before any command: the first spawn starts them if nothing did. The start is the layer's,
  // not its caller's: it runs on the layer's runtime (its logs and spans), in the layer's scope, and a
  // caller interrupted meanwhile leaves it to finish for the next one.
  const layerRuntime = yield* Effect.runtime<never>()
  const helpersStarted = yield* Deferred.make<void>()
  let helpersStarting = false
  // Once they have started, a spawn does not await them: awaiting even a completed Deferred ends the
  // caller's synchronous run, and its launch would wait for the next turn of the microtask queue.
  let helpersReady = false
  const startLauncher = startLayerLauncher(stdio, hostDeath).pipe(
    Effect.catchAllDefect((defect) =>
      Effect.as(Effect.logWarning("the launcher could not start; commands are spawned by the host", defect), undefined)
    ),
    Effect.map((started) => {
      launcher = started
    }),
    Effect.provideService(Scope.Scope, layerScope)
  )
  const startOnce = Effect.gen(function*() {
    yield* startReaper
    if (settings.launcher === "withHelpers") yield* startLauncher
  }).pipe(
    Effect.ensuring(Effect.zipRight(Effect.sync(() => {
      helpersReady = true
    }), Deferred.succeed(helpersStarted, undefined))),
    Effect.uninterruptible
  )
  // On demand, the first request without a runner starts it once the host has spawned that request
  // (after the reaper: every spawn awaits the helpers first), and nothing waits for it to be ready.
  let launcherDemanded = settings.launcher !== "onDemand"
  const demandLauncher = (options: ProcessSpawner.Options) => {
    if (launcherDemanded || options.wrapper !== undefined) return
    launcherDemanded = true
    Runtime.runFork(layerRuntime)(Effect.uninterruptible(startLauncher), { scope: layerScope })
  }
  const startHelpers = Effect.suspend(() => {
    if (helpersReady) return Effect.void
    if (!helpersStarting) {
      helpersStarting = true
      Runtime.runFork(layerRuntime)(startOnce, { scope: layerScope, immediate: true })
    }
    return Deferred.await(helpersStarted)
  })
  const waitFor = yield* FiberRef.get(helpersWaitFor)
  if (Option.isNone(waitFor)) yield* startHelpers
  else yield* Effect.forkIn(Effect.zipRight(waitFor.value, startHelpers), layerScope)

  // The spawn is uninterruptible: an interruption of its caller waits, recorded, until it is over.
  const start = (options: ProcessSpawner.Options) =>
    Effect.withFiberRuntime<SpawnedChild, SpawnError>((fiber) =>
      Effect.async<SpawnedChild, SpawnError>((resume) => {
        // Node refuses a NUL byte in an argument, and fd 3's reader would stop at one: refuse both alike.
        if (options.command.includes("\0")) {
          return resume(Effect.fail(new SpawnError({ code: undefined, message: "command contains a NUL byte" })))
        }
        const shell = shellInvocation(options.command)
        const bash = ["bash", ...shell.args]
        const [file, ...args] = options.wrapper === undefined ? bash : [...options.wrapper.argv, ...bash]
        const direct = () => spawnDirect(options, shell, file!, args, stdio, hostDeath.track, resume)
        const interrupted = () => !Cause.isEmpty(fiber.getFiberRef(FiberRef.interruptedCause))
        if (launcher?.serves(options) === true) {
          return launcher.launch(options, shell, file!, args, resume, direct, interrupted)
        }
        direct()
        demandLauncher(options)
      })
    ).pipe(Effect.tap((spawned) => hostDeath.giveReaper(spawned, launcher?.launcher)))

  const release = (spawned: SpawnedChild) =>
    Effect.suspend(() => {
      for (const stream of spawned.child.stdio) stream?.destroy()
      return hostDeath.release(spawned, launcher?.launcher)
    })

  // `acquireRelease` without its fiber-ref bookkeeping: the release needs none of the caller's refs.
  // The helpers' start, and the launcher's when it starts with them, are awaited (interruptibly)
  // before the spawn, so every spawn sees them settled.
  const ready = Effect.zipRight(
    startHelpers,
    Effect.suspend(() => launcher === undefined || settings.launcher === "onDemand" ? Effect.void : launcher.started)
  )
  const spawn = (options: ProcessSpawner.Options) =>
    Effect.flatMap(Effect.zipRight(ready, Effect.scope), (scope) =>
      Effect.uninterruptible(
        Effect.tap(start(options), (spawned) => Scope.addFinalizer(scope, release(spawned)))
      )).pipe(Effect.map((spawned) => spawnedProcess(spawned, options)))

  return Context.make(ProcessSpawner, ProcessSpawner.of({ spawn })).pipe(Context.add(HostReaper, reaper))
})

const layerOf = (options: { readonly launcher: LauncherStart }): Layer.Layer<ProcessSpawner | HostReaper> =>
  Layer.scopedContext(make(options))

/**
 * The Node implementation of `ProcessSpawner`: commands are spawned by a pre-forked launcher
 * process whenever it can serve, else by the host. Provides the {@link HostReaper} too. Its helper
 * processes (the reaper and the launcher) start with the layer.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer: Layer.Layer<ProcessSpawner | HostReaper> = layerOf({ launcher: "withHelpers" })

/**
 * The Node implementation of `ProcessSpawner` for commands that mostly run under a runner
 * (bubblewrap), which the host always spawns itself: the launcher starts after the first command
 * without one (plain `bash`), which the host spawns, and serves the later ones once it is ready; no
 * spawn waits for it. The sandboxing executor's layer uses it when its default mode confines (without
 * `contain` or `directSpawn`, which start no launcher).
 *
 * @since 0.1.0
 * @category layers
 */
export const layerLauncherOnDemand: Layer.Layer<ProcessSpawner | HostReaper> = layerOf({ launcher: "onDemand" })

/**
 * The Node implementation of `ProcessSpawner` without the launcher: every command is spawned by the
 * host itself (the executors' `directSpawn` setting).
 *
 * @since 0.1.0
 * @category layers
 */
export const layerDirectSpawn: Layer.Layer<ProcessSpawner | HostReaper> = layerOf({ launcher: "never" })
