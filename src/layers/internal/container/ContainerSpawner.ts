/**
 * The `ProcessSpawner` port on a container engine: each spawn runs in the session's box under a
 * wrapper that makes the command the leader of its own process group and reports its pid first, and
 * whose exec's own streams say how the leader ended (`ServedSpawn`). Most calls are taken by a served
 * exec kept in the box; one with input or unexportable variables is an exec of its own. Signals and
 * liveness go through further execs.
 * The executor core above it is the local executor's: timeouts, TERM → grace → KILL, leftovers,
 * bounded drain and spill files work unchanged.
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import * as ExecutionStrategy from "effect/ExecutionStrategy"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import * as Scope from "effect/Scope"
import { ProcessSpawner } from "../../../services/ProcessSpawner.js"
import type { Box, Boxes } from "./Boxes.js"
import type { ContainerEngine } from "../../../services/ContainerEngine.js"
import { ExecPool } from "./ExecPool.js"
import { servable } from "./served.js"
import { spawnServed } from "./ServedSpawn.js"
import { spawnFailure } from "./spawnNotes.js"
import { envProblem, wrapperEnv } from "./wrapper.js"

export { boxGoneText, lostText, oomText } from "./spawnNotes.js"

/** The session a spawn belongs to: its `DSH_SESSION_ID`, or the layer's own box without one. */
const sessionOf = (env: Readonly<Record<string, string>>): string => env.DSH_SESSION_ID ?? ""

export interface ContainerSpawnerOptions {
  readonly engine: ContainerEngine.Service
  readonly boxes: Boxes
  readonly memoryMb?: number | undefined
  /** Bound on a start's first line, which comes once the engine has carried the exec's start. */
  readonly startTimeoutMs: number
  /** The layer's scope: the boxes' served execs are closed with it at the latest. */
  readonly scope: Scope.Scope
}

/**
 * Whether a call runs on a served exec of the box's pool: one with nothing on stdin and variables bash
 * can export as given. Any other runs in an exec of its own.
 */
const pooled = (options: ProcessSpawner.Options): boolean => options.stdin === undefined && servable(wrapperEnv(options.env))

export const makeContainerSpawner = (options: ContainerSpawnerOptions): ProcessSpawner["Type"] => {
  const { boxes, engine, startTimeoutMs } = options

  const removeFull = (box: Box, pid: number) =>
    Effect.logWarning(
      `no process could start in container ${box.id.slice(0, 12)} to kill group ${pid}: the container is removed, ` +
        "and the session's next command starts in a new one"
    ).pipe(Effect.zipRight(boxes.removeNow(box)))

  // A SIGKILL that nothing in the box could send, in two tries (a fork bomb at the pids limit): the box goes.
  const killGroupOrBox = (box: Box, pid: number) => {
    const send = engine.signalGroup(box.id, pid, "SIGKILL")
    return Effect.flatMap(send, (sent) => sent ? Effect.succeed(true) : send).pipe(
      Effect.flatMap((sent) => sent ? Effect.void : removeFull(box, pid))
    )
  }

  // Each box's served execs; a box gone or replaced takes its pool with it.
  const pools = new Map<Box, ExecPool>()
  const poolOf = (box: Box) =>
    Effect.gen(function*() {
      for (const [each, pool] of pools) {
        if (each.gone || Option.getOrUndefined(boxes.boxOf(each.session)) !== each) {
          pools.delete(each)
          yield* pool.close
        }
      }
      const known = pools.get(box)
      if (known !== undefined) return known
      const pool = yield* ExecPool.make(engine, box.id, options.scope)
      // Another call of the box may have made one meanwhile: one pool per box.
      const first = pools.get(box)
      if (first !== undefined) return yield* Effect.as(pool.close, first)
      pools.set(box, pool)
      return pool
    })

  const spawnOnce = (spawnOptions: ProcessSpawner.Options) =>
    Effect.gen(function*() {
      const box: Box = yield* Effect.acquireRelease(
        boxes.acquire(sessionOf(spawnOptions.env)).pipe(
          Effect.mapError((error) =>
            error._tag === "WorkspaceMissing"
              ? spawnFailure(`the directory the containers mount does not exist: ${error.path} (ENOENT)`, "ENOENT")
              : spawnFailure(`the command's container could not be started: ${error.message}`)
          )
        ),
        (box) => boxes.release(box)
      )
      // Creating the box may have taken a while: a call aborted meanwhile starts nothing.
      if (spawnOptions.signal?.aborted === true) return yield* spawnFailure("aborted before the command started")
      const pool = pooled(spawnOptions) ? yield* poolOf(box) : undefined
      return yield* spawnServed({ engine, boxes, memoryMb: options.memoryMb, startTimeoutMs, killGroupOrBox }, box, pool, spawnOptions)
    })

  const spawn = (spawnOptions: ProcessSpawner.Options) =>
    Effect.gen(function*() {
      if (spawnOptions.command.includes("\0")) return yield* spawnFailure("command contains a NUL byte")
      const problem = envProblem(spawnOptions.env)
      if (problem !== undefined) return yield* spawnFailure(problem, "EINVAL")
      const scope = yield* Effect.scope
      // Each attempt in a scope of its own, released when it fails: a box found gone (removed or
      // stopped from outside) when its exec was created ran nothing, and a new box takes the call.
      const attempt = Effect.flatMap(Scope.fork(scope, ExecutionStrategy.sequential), (attemptScope) =>
        spawnOnce(spawnOptions).pipe(
          Scope.extend(attemptScope),
          Effect.onError((cause) => Scope.close(attemptScope, Exit.failCause(cause)))
        ))
      return yield* attempt.pipe(
        Effect.catchTag("BoxGone", () => attempt),
        Effect.catchTag("BoxGone", (gone) => Effect.fail(gone.failure))
      )
    })

  return ProcessSpawner.of({
    spawn: (spawnOptions) => Effect.withSpan(spawn(spawnOptions), "ContainerSpawner.spawn")
  })
}
