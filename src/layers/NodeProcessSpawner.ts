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
import { Cause, Effect, FiberRef, Layer, Scope } from "effect"
import { ProcessSpawner, SpawnError } from "../services/ProcessSpawner.js"
import { HostReaper } from "../services/HostReaper.js"
import * as HostReaperLive from "./HostReaper.js"
import { spawnDirect } from "./internal/spawner/directSpawn.js"
import { makeHostDeath } from "./internal/spawner/hostDeath.js"
import { startLayerLauncher } from "./internal/spawner/layerLauncher.js"
import { shellInvocation } from "./internal/spawner/shellInvocation.js"
import type { SpawnedChild } from "./internal/spawner/spawnedChild.js"
import { spawnedProcess } from "./internal/spawner/spawnedProcess.js"
import { makeStdio } from "./internal/spawner/stdio.js"

const make = (settings: { readonly launcher: boolean }) => Effect.gen(function*() {
  const hostDeath = yield* makeHostDeath(yield* HostReaper)
  const stdio = yield* makeStdio
  const launcher = settings.launcher ? yield* startLayerLauncher(stdio, hostDeath) : undefined

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
      })
    ).pipe(Effect.tap((spawned) => hostDeath.giveReaper(spawned, launcher?.launcher)))

  const release = (spawned: SpawnedChild) =>
    Effect.suspend(() => {
      for (const stream of spawned.child.stdio) stream?.destroy()
      return hostDeath.release(spawned, launcher?.launcher)
    })

  // `acquireRelease` without its fiber-ref bookkeeping: the release needs none of the caller's refs.
  // The launcher's start is awaited (interruptibly) before the spawn, so every spawn sees it settled.
  const spawn = (options: ProcessSpawner.Options) =>
    Effect.flatMap(launcher === undefined ? Effect.scope : Effect.zipRight(launcher.started, Effect.scope), (scope) =>
      Effect.uninterruptible(
        Effect.tap(start(options), (spawned) => Scope.addFinalizer(scope, release(spawned)))
      )).pipe(Effect.map((spawned) => spawnedProcess(spawned, options)))

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
