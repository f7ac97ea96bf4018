/**
 * The `ProcessSpawner` port over the host's spawn: `bash -c` as the leader of a new session and
 * process group (a command too long for argv goes over fd 3), spawned by `posix_spawn` (no fork:
 * the same cost from a host of any size) or by `node:child_process`, zombie-aware liveness from
 * `/proc`, a host `exit` hook that SIGKILLs every group still tracked, and, if the host dies without
 * running any code, a {@link HostReaper} doing the same.
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as FiberRef from "effect/FiberRef"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Runtime from "effect/Runtime"
import * as Scope from "effect/Scope"
import { ProcessSpawner, SpawnError } from "../services/ProcessSpawner.js"
import { handOverChild } from "./internal/spawner/childInputs.js"
import { HostReaper } from "./internal/spawner/HostReaper.js"
import { spawnDirect, spawnFailure } from "./internal/spawner/directSpawn.js"
import { makeHostDeath } from "./internal/spawner/hostDeath.js"
import type { PosixSpawner } from "./internal/spawner/posixSpawn.js"
import { makePosixSpawner } from "./internal/spawner/posixSpawn.js"
import { makeReaperProcess } from "./internal/spawner/reaperProcess.js"
import { shellInvocation } from "./internal/spawner/shellInvocation.js"
import { SpawnedChild } from "./internal/spawner/spawnedChild.js"
import { spawnedProcess } from "./internal/spawner/spawnedProcess.js"
import { makeStdio } from "./internal/spawner/stdio.js"
import { helpersWaitFor } from "./startHelpersAfter.js"

const make = (settings: { readonly posixSpawn: boolean }) => Effect.gen(function*() {
  const layerScope = yield* Effect.scope
  const { reaper, start: startReaper } = yield* makeReaperProcess
  const hostDeath = yield* makeHostDeath(reaper)
  const stdio = yield* makeStdio
  let posix: PosixSpawner | undefined

  // The helpers (the reaper, and `posix_spawn`'s bindings) start once, before any command: the first
  // spawn starts them if nothing did. The start is the layer's, not its caller's: it runs on the
  // layer's runtime (its logs and spans), in the layer's scope, and a caller interrupted meanwhile
  // leaves it to finish for the next one.
  const layerRuntime = yield* Effect.runtime<never>()
  const helpersStarted = yield* Deferred.make<void>()
  let helpersStarting = false
  // Once they have started, a spawn does not await them: awaiting even a completed Deferred ends the
  // caller's synchronous run.
  let helpersReady = false
  const startOnce = Effect.gen(function*() {
    yield* startReaper
    if (settings.posixSpawn) posix = yield* Scope.extend(makePosixSpawner, layerScope)
  }).pipe(
    Effect.ensuring(Effect.zipRight(Effect.sync(() => {
      helpersReady = true
    }), Deferred.succeed(helpersStarted, undefined))),
    Effect.uninterruptible
  )
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

  // `posix_spawn` when it serves the request, else `child_process`; either resumes with the child
  // in the tick it started, tracked for the host's `exit` hook.
  const spawnChild = (
    options: ProcessSpawner.Options,
    resume: (effect: Effect.Effect<SpawnedChild, SpawnError>) => void
  ) => {
    // Node refuses a NUL byte in an argument, and fd 3's reader would stop at one: refuse both alike.
    if (options.command.includes("\0")) {
      return resume(Effect.fail(new SpawnError({ code: undefined, message: "command contains a NUL byte" })))
    }
    const shell = shellInvocation(options.command)
    const bash = ["bash", ...shell.args]
    const [file, ...args] = options.wrapper === undefined ? bash : [...options.wrapper.argv, ...bash]
    const list = stdio.list(options.stdin !== undefined, shell.script !== undefined, options.wrapper?.input?.fd)
    if (posix !== undefined) {
      let child
      try {
        child = posix.spawn({ file: file!, args, cwd: options.cwd, env: options.env, stdio: list })
      } catch (error) {
        return resume(Effect.fail(spawnFailure(error, options)))
      }
      if (child !== undefined) {
        hostDeath.track(child.pid)
        handOverChild(child.stdio, options, shell)
        return resume(Effect.succeed(SpawnedChild.Posix({ child })))
      }
    }
    spawnDirect(options, shell, file!, args, list, hostDeath.track, resume)
  }

  // The spawn is uninterruptible: an interruption of its caller waits, recorded, until it is over.
  const start = (options: ProcessSpawner.Options) =>
    Effect.async<SpawnedChild, SpawnError>((resume) => spawnChild(options, resume)).pipe(
      Effect.tap((spawned) => hostDeath.giveReaper(spawned.child.pid!))
    )

  const release = (spawned: SpawnedChild) =>
    Effect.suspend(() => {
      for (const stream of spawned.child.stdio) stream?.destroy()
      return hostDeath.release(spawned.child.pid!)
    })

  // `acquireRelease` without its fiber-ref bookkeeping: the release needs none of the caller's refs.
  // The helpers' start is awaited (interruptibly) before the spawn, so every spawn sees it settled.
  const spawn = (options: ProcessSpawner.Options) =>
    Effect.flatMap(Effect.zipRight(startHelpers, Effect.scope), (scope) =>
      Effect.uninterruptible(
        Effect.tap(start(options), (spawned) => Scope.addFinalizer(scope, release(spawned)))
      )).pipe(Effect.map((spawned) => spawnedProcess(spawned, options)))

  return Context.make(ProcessSpawner, ProcessSpawner.of({ spawn })).pipe(Context.add(HostReaper, reaper))
})

const layerOf = (options: { readonly posixSpawn: boolean }): Layer.Layer<ProcessSpawner | HostReaper> =>
  Layer.scopedContext(make(options))

/**
 * The Node implementation of `ProcessSpawner`: commands are spawned by `posix_spawn` (through the
 * optional dependency koffi, on Linux, from the main thread), else by `node:child_process`. Provides
 * the {@link HostReaper} too, whose helper process starts with the layer.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer: Layer.Layer<ProcessSpawner | HostReaper> = layerOf({ posixSpawn: true })

/**
 * The Node implementation of `ProcessSpawner` over `node:child_process` alone: every command is
 * spawned by a fork of the host (the executors' `directSpawn` setting).
 *
 * @since 0.1.0
 * @category layers
 */
export const layerDirectSpawn: Layer.Layer<ProcessSpawner | HostReaper> = layerOf({ posixSpawn: false })
