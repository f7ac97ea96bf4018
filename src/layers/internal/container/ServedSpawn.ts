/**
 * A call in a box (`served.ts`): run by a served exec of the box's pool (no exec of the engine's on its
 * way unless none waits), or by an exec of its own (`once`) when it has input or variables bash cannot
 * export. Either way the leader's pid comes before it runs anything, and how it ended, whether its
 * group is empty and where its output ends come on the exec's own streams under the call's key.
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Scope from "effect/Scope"
import type { ContainerEngine } from "../../../services/ContainerEngine.js"
import type { ProcessSpawner, SpawnError } from "../../../services/ProcessSpawner.js"
import { makeExitLatch } from "../spawner/exitLatch.js"
import type { Box, Boxes } from "./Boxes.js"
import { execPipes } from "./execPipes.js"
import type { ExecPool, TakenExec } from "./ExecPool.js"
import type { Piece, ServedKey } from "./served.js"
import { goLine, MarkerScanner, randomServedKey, servedRequest } from "./served.js"
import { BoxGone, callLoss, endNote, noShellText, spawnFailure } from "./spawnNotes.js"
import type { LeaderStatus } from "./wrapper.js"
import { parseStatus, servedArgv, wrapperEnv } from "./wrapper.js"

const encoder = new TextEncoder()

/** How long a served exec may take to say its pid before the host looks whether its box is paused. */
const pausedAfterMs = 1_000

export interface ServedContext {
  readonly engine: ContainerEngine.Service
  readonly boxes: Boxes
  readonly memoryMb: number | undefined
  /** Bound on the wrapper's first line. */
  readonly startTimeoutMs: number
  readonly killGroupOrBox: (box: Box, pid: number) => Effect.Effect<void, ContainerEngine.Error>
}

type Stream = "stdout" | "stderr"

/** One exec's two streams split under a call's key. */
const scannersOf = (key: ServedKey) => ({ stdout: new MarkerScanner(key.marker), stderr: new MarkerScanner(key.marker) })

interface Started {
  readonly taken: TakenExec
  readonly scanners: ReturnType<typeof scannersOf>
  /** The wrapper's first line: `pid N` or `nowd`; `undefined` when the stream ended first. */
  readonly first: string | undefined
  /** What followed it in the frames read. */
  readonly early: Array<{ readonly stream: Stream; readonly piece: Piece }>
  /** The stderr read before it. */
  readonly said: string
}

/** Writes the call to `taken` and reads to the wrapper's first line. */
const startOn = (taken: TakenExec, key: ServedKey, request: Uint8Array) =>
  Effect.gen(function*() {
    const scanners = scannersOf(key)
    yield* taken.exec.write(request)
    const early: Array<{ readonly stream: Stream; readonly piece: Piece }> = []
    let said = ""
    let first: string | undefined
    while (first === undefined) {
      const frame = yield* taken.exec.next
      if (frame === undefined) break
      for (const piece of scanners[frame.stream].push(frame.bytes)) {
        if (first !== undefined) early.push({ stream: frame.stream, piece })
        else if ("line" in piece) {
          if (frame.stream === "stdout" && (piece.line === "nowd" || /^pid \d+$/.test(piece.line))) first = piece.line
        } else if (frame.stream === "stderr") said += Buffer.from(piece.data).toString("utf8")
        // stdout before the pid line is no output of this call's (a process of an earlier one).
      }
    }
    return { taken, scanners, first, early, said } satisfies Started
  })

/**
 * Runs a call on an exec of `pool`, or, without one, on an exec of its own, which the engine gives the
 * call's environment and whose further input is the call's.
 */
export const spawnServed = (
  context: ServedContext,
  box: Box,
  pool: ExecPool | undefined,
  spawnOptions: ProcessSpawner.Options
): Effect.Effect<ProcessSpawner.Process, SpawnError | BoxGone, Scope.Scope> =>
  Effect.gen(function*() {
    const { boxes, engine, startTimeoutMs } = context
    const scope = yield* Effect.scope
    const key = randomServedKey()
    const env = wrapperEnv(spawnOptions.env)
    const request = servedRequest(key, spawnOptions.cwd, spawnOptions.command, pool === undefined ? {} : env)
    const input = typeof spawnOptions.stdin === "string" ? encoder.encode(spawnOptions.stdin) : spawnOptions.stdin
    // An exec goes back to the pool only once a call's output ended with the wrapper's `end`.
    let reusable: TakenExec | undefined
    const execOf: Effect.Effect<TakenExec, ContainerEngine.Error> = pool === undefined
      ? Effect.map(engine.exec(box.id, { argv: servedArgv("once"), env, stdin: true }), (exec) => ({ exec, pooled: false }))
      : pool.take
    const take = Effect.acquireRelease(
      execOf.pipe(Effect.catchAll((error) => failedExec(context, box, error))),
      (taken) => pool !== undefined && reusable === taken ? pool.give(taken.exec) : taken.exec.close
    )
    const bounded = <A, E>(effect: Effect.Effect<A, E, Scope.Scope>) =>
      effect.pipe(
        Effect.interruptible,
        Effect.timeoutFail({
          duration: startTimeoutMs,
          onTimeout: () => spawnFailure(`the command's shell did not start within ${startTimeoutMs} ms in container ${box.id.slice(0, 12)}`)
        })
      )
    // A waiting exec in a box paused from outside cannot answer (a new one is refused at once): one
    // that has not said its pid after a while is closed if the box is paused, and the call fails so.
    let paused = false
    const startWatched = (taken: TakenExec) =>
      Effect.gen(function*() {
        const watch = yield* Effect.fork(Effect.interruptible(Effect.sleep(pausedAfterMs).pipe(
          Effect.zipRight(engine.boxPaused(box.id)),
          Effect.flatMap((frozen) => frozen ? Effect.zipRight(Effect.sync(() => (paused = true)), taken.exec.close) : Effect.void)
        )))
        return yield* startOn(taken, key, request).pipe(Effect.ensuring(Fiber.interrupt(watch)))
      })
    // Nothing runs before the host's `go`: an exec closed before it (interrupted, timed out, refused)
    // ran nothing. A waiting exec that died meanwhile (the box stopped, its processes killed) is
    // replaced by a new one.
    let started = yield* bounded(Effect.flatMap(take, startWatched))
    if (started.first === undefined && pool !== undefined && started.taken.pooled && !paused) {
      yield* started.taken.exec.close
      yield* pool.flush
      started = yield* bounded(Effect.flatMap(take, startWatched))
    }
    const { early, first, said, scanners, taken } = started
    const exec = taken.exec
    const loss = callLoss(box, exec)
    if (first === undefined && paused) {
      return yield* spawnFailure(`the command could not be started in container ${box.id.slice(0, 12)}: the container is paused`)
    }
    if (first === "nowd") return yield* spawnFailure(`workdir does not exist: ${spawnOptions.cwd} (ENOENT)`, "ENOENT")
    if (first === undefined) {
      if (!(yield* engine.boxRunning(box.id).pipe(Effect.orElseSucceed(() => false)))) box.gone = true
      // A box restarted from outside lost its supervisor shell: made again, the call is tried again.
      if (!box.gone && (yield* boxes.repairSupervisor(box).pipe(Effect.orElseSucceed(() => false)))) {
        return yield* new BoxGone({ failure: spawnFailure(`the command's shell did not start in container ${box.id.slice(0, 12)}`) })
      }
      return yield* spawnFailure(noShellText(box.id, said.trim(), box.gone, spawnOptions.env.PATH))
    }
    const pid = Number(first.slice("pid ".length))
    // Once `go` is sent the command runs: a spawn that ends any other way kills its group.
    let handedOver = false
    yield* Scope.addFinalizer(scope, Effect.suspend(() =>
      handedOver || box.gone ? Effect.void : context.killGroupOrBox(box, pid).pipe(
        Effect.catchAll((error) => Effect.logWarning(`could not kill abandoned group ${pid} in ${box.id.slice(0, 12)}`, error.message))
      )
    ))
    // A served leader's input is /dev/null; an exec of its own gets the call's input after `go`, then its end.
    yield* pool === undefined ? exec.sendInput(input === undefined ? goLine : Buffer.concat([goLine, input])) : exec.write(goLine)

    const latch = makeExitLatch()
    let status: LeaderStatus | undefined
    let emptied = false
    let outputEnded = false
    const ended = { stdout: false, stderr: false }
    const settle = (leader: LeaderStatus | undefined): void =>
      latch.settle(leader === undefined ? { exitCode: null, signal: "SIGKILL" } : { exitCode: leader.exitCode, signal: leader.signal })

    /** Takes one piece of `stream`; the command's bytes go to `deliver`. */
    const take1 = (stream: Stream, piece: Piece, deliver: (stream: Stream, bytes: Uint8Array) => Effect.Effect<void>) => {
      if ("data" in piece) return ended[stream] ? Effect.void : deliver(stream, piece.data)
      if (piece.line === key.endLine) {
        // Written once the group was empty and no process of the command held the stream.
        ended[stream] = true
        emptied = true
      } else if (stream === "stdout" && status === undefined) {
        status = parseStatus(piece.line, key.status)
        if (status !== undefined) settle(status)
      } else if (stream === "stdout" && piece.line === key.status.emptyLine) {
        emptied = true
      }
      return Effect.void
    }

    const read = (deliver: (stream: Stream, bytes: Uint8Array) => Effect.Effect<void>) =>
      Effect.gen(function*() {
        for (const { piece, stream } of early) yield* take1(stream, piece, deliver)
        while (!(ended.stdout && ended.stderr)) {
          const frame = yield* exec.next
          if (frame === undefined) break
          for (const piece of scanners[frame.stream].push(frame.bytes)) yield* take1(frame.stream, piece, deliver)
        }
        if (ended.stdout && ended.stderr && status !== undefined) {
          reusable = taken
        } else {
          // The exec's output ended: its wrapper has exited, or the engine cut the stream.
          for (const stream of ["stdout", "stderr"] as const) {
            const held = scanners[stream].end()
            if (held !== undefined && !ended[stream]) yield* deliver(stream, held)
          }
        }
        outputEnded = true
        const note = yield* endNote(engine, box, status, context.memoryMb, loss.reason)
        if (note !== undefined) yield* deliver("stderr", encoder.encode(note))
        settle(status)
      })

    const process: ProcessSpawner.Process = {
      pid,
      openPipes: (sinks) => execPipes(sinks, read),
      exit: latch.exit,
      onExit: latch.onExit,
      signalGroup: (signal) =>
        box.gone
          ? Effect.void
          : (signal === "SIGKILL" ? context.killGroupOrBox(box, pid) : Effect.asVoid(engine.signalGroup(box.id, pid, signal))).pipe(
            Effect.catchAll((error) => loss.failed(`could not signal group ${pid} in ${box.id.slice(0, 12)}`, error))
          ),
      // The wrapper says when the group is empty while its output runs; once that has ended without
      // a word of it, the engine answers.
      groupAlive: Effect.suspend(() => {
        if (box.gone) return Effect.succeed(false)
        const alive = status === undefined || (status.groupAlive && !emptied)
        if (!outputEnded || !alive) return Effect.succeed(alive)
        return engine.groupAlive(box.id, pid).pipe(
          Effect.catchAll((error) => Effect.as(loss.failed(`could not look at group ${pid} in ${box.id.slice(0, 12)}`, error), false))
        )
      })
    }
    handedOver = true
    return process
  })

/** The engine refused a new served exec: nothing started. */
const failedExec = (context: ServedContext, box: Box, error: ContainerEngine.Error) => {
  const failure = spawnFailure(`the command could not be started in container ${box.id.slice(0, 12)}: ${error.message}`)
  if (error._tag !== "ContainerNotFound" && error._tag !== "ContainerConflict") return Effect.fail(failure)
  // A paused box is not gone: its commands go on once it is unpaused.
  return Effect.flatMap(context.engine.boxPaused(box.id), (paused): Effect.Effect<never, SpawnError | BoxGone> => {
    if (paused) return Effect.fail(failure)
    box.gone = true
    return Effect.fail(new BoxGone({ failure }))
  })
}
