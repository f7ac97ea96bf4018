/**
 * The `ProcessSpawner` port on a container engine: each spawn runs in the session's box under a
 * wrapper that makes the command the leader of its own process group and reports its pid first. Most
 * calls are taken by a served exec kept in the box (`ServedSpawn`), whose own streams say how the
 * leader ended; the others are an exec each, whose leader's end comes from the box's control
 * directory. Signals and liveness go through further execs.
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
import type { SpawnError } from "../../../services/ProcessSpawner.js"
import type { Box, Boxes } from "./Boxes.js"
import type { ContainerEngine } from "../../../services/ContainerEngine.js"
import type { LeaderStatus } from "./wrapper.js"
import { makeExitLatch } from "../spawner/exitLatch.js"
import { tooLongForArgv } from "../spawner/shellInvocation.js"
import { execPipes } from "./execPipes.js"
import { ExecPool } from "./ExecPool.js"
import { servable } from "./served.js"
import { spawnServed } from "./ServedSpawn.js"
import { BoxGone, callLoss, endNote, noShellText, spawnFailure } from "./spawnNotes.js"
import { controlMount, envProblem, wrapperArgv, wrapperEnv } from "./wrapper.js"

export { boxGoneText, lostText, oomText } from "./spawnNotes.js"

const encoder = new TextEncoder()

/** How often the leader's status file is read when no watch event came (a safety net, not the path). */
const statusPollMs = 1_000

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

/** Reads frames until the wrapper's first stdout line; the frames read past it are kept for the pipes. */
const readPidLine = (exec: ContainerEngine.ExecSession) =>
  Effect.gen(function*() {
    const early: Array<ContainerEngine.Frame> = []
    let line = ""
    for (;;) {
      const frame = yield* exec.next
      if (frame === undefined) return { line: undefined, early }
      if (frame.stream === "stderr") {
        early.push(frame)
        continue
      }
      const text = Buffer.from(frame.bytes)
      const newline = text.indexOf(10)
      if (newline === -1) {
        line += text.toString("latin1")
        continue
      }
      line += text.subarray(0, newline).toString("latin1")
      if (newline + 1 < text.length) early.push({ stream: "stdout", bytes: text.subarray(newline + 1) })
      return { line, early }
    }
  })

/**
 * Whether a call runs on a served exec: one with nothing on stdin, a command that fits an argv and
 * variables bash can export as given. Any other runs in an exec of its own.
 */
const served = (options: ProcessSpawner.Options): boolean =>
  options.stdin === undefined && !tooLongForArgv(options.command) && servable(wrapperEnv(options.env))

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
      const scope = yield* Effect.scope
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
      if (served(spawnOptions)) {
        return yield* spawnServed({ engine, boxes, memoryMb: options.memoryMb, startTimeoutMs, killGroupOrBox }, box, yield* poolOf(box), spawnOptions)
      }
      const status = box.control.expect()
      yield* Scope.addFinalizer(scope, Effect.sync(status.release))

      // Until its pid line is read, a started exec may be running the command already: a start that
      // ends any other way (interrupted, timed out, refused) cancels it, or kills what it started.
      const abandon = Effect.flatMap(status.cancel, (leader) =>
        leader === undefined || box.gone ? Effect.void : killGroupOrBox(box, leader).pipe(
          Effect.catchAll((error) => Effect.logWarning(`could not kill abandoned group ${leader} in ${box.id.slice(0, 12)}`, error.message))
        ))
      let startedNothing = false
      const { early, exec, pid } = yield* Effect.gen(function*() {
        const long = tooLongForArgv(spawnOptions.command)
        const input = typeof spawnOptions.stdin === "string" ? encoder.encode(spawnOptions.stdin) : spawnOptions.stdin
        const exec = yield* Effect.acquireRelease(
          engine.exec(box.id, {
            argv: wrapperArgv(spawnOptions.command, spawnOptions.cwd, `${controlMount}/${status.name}`),
            env: wrapperEnv(spawnOptions.env),
            // Always: the call's key goes first on stdin.
            stdin: true
          }).pipe(Effect.catchAll((error) => {
            // The engine answered with an error: it started nothing.
            if (error._tag !== "EngineUnavailable") startedNothing = true
            const failure = spawnFailure(`the command could not be started in container ${box.id.slice(0, 12)}: ${error.message}`)
            if (error._tag !== "ContainerNotFound" && error._tag !== "ContainerConflict") return Effect.fail(failure)
            // A paused box is not gone: its commands go on once it is unpaused.
            return Effect.flatMap(engine.boxPaused(box.id), (paused): Effect.Effect<never, SpawnError | BoxGone> => {
              if (paused) return Effect.fail(failure)
              box.gone = true
              return Effect.fail(new BoxGone({ failure }))
            })
          })),
          (exec) => exec.close
        )
        const script = long ? encoder.encode(`${spawnOptions.command}\0`) : new Uint8Array()
        yield* exec.sendInput(Buffer.concat([encoder.encode(status.key.line), script, input ?? new Uint8Array()]))

        const { early, line } = yield* readPidLine(exec).pipe(
          Effect.interruptible,
          Effect.timeoutFail({
            duration: startTimeoutMs,
            onTimeout: () => spawnFailure(`the command's shell did not start within ${startTimeoutMs} ms in container ${box.id.slice(0, 12)}`)
          })
        )
        if (line === "nowd") {
          // The wrapper said so and ended: it started nothing.
          startedNothing = true
          return yield* spawnFailure(`workdir does not exist: ${spawnOptions.cwd} (ENOENT)`, "ENOENT")
        }
        const pid = line === undefined ? NaN : Number(line)
        if (!Number.isSafeInteger(pid) || pid <= 0) {
          const said = early.map((frame) => Buffer.from(frame.bytes).toString("utf8")).join("").trim()
          if (!(yield* engine.boxRunning(box.id).pipe(Effect.orElseSucceed(() => false)))) box.gone = true
          // A box restarted from outside lost its supervisor shell: made again, the call is tried again.
          if (!box.gone && (yield* boxes.repairSupervisor(box).pipe(Effect.orElseSucceed(() => false)))) {
            startedNothing = true
            return yield* new BoxGone({ failure: spawnFailure(`the command's shell did not start in container ${box.id.slice(0, 12)}`) })
          }
          return yield* spawnFailure(noShellText(box.id, said, box.gone, spawnOptions.env.PATH))
        }
        return { exec, early, pid }
      }).pipe(Effect.onExit((exit) => Exit.isSuccess(exit) || startedNothing ? Effect.void : abandon))
      const loss = callLoss(box, exec)

      // The leader's end: the status file (watched, polled as a safety net), or the exec's end without
      // one. An exec that ended without a status had its wrapper killed, with the box's processes or on
      // its own; what is left of its group is then killed as leftovers: a kill either way.
      const latch = makeExitLatch()
      const settle = (leader: LeaderStatus | undefined): void =>
        latch.settle(
          leader === undefined
            ? { exitCode: null, signal: "SIGKILL" }
            : { exitCode: leader.exitCode, signal: leader.signal }
        )
      const removeListener = status.onStatus(settle)
      yield* Scope.addFinalizer(scope, Effect.sync(removeListener))
      // Interruptible: a spawn may run where interruption is masked, and the fork would inherit that.
      yield* Effect.forkIn(
        Effect.interruptible(Effect.gen(function*() {
          while (latch.value === undefined) {
            yield* Effect.sleep(statusPollMs)
            const leader = status.read()
            if (leader !== undefined) settle(leader)
          }
        })),
        scope
      )

      let outputEnded = false
      const readPipes = (deliver: (stream: "stdout" | "stderr", bytes: Uint8Array) => Effect.Effect<void>) =>
        Effect.gen(function*() {
          for (const frame of early) yield* deliver(frame.stream, frame.bytes)
          for (let frame = yield* exec.next; frame !== undefined; frame = yield* exec.next) yield* deliver(frame.stream, frame.bytes)
          // Every writer has closed the pipes: the wrapper has exited, after writing its status if it could.
          outputEnded = true
          yield* status.settled
          const leader = status.read()
          const note = yield* endNote(engine, box, leader, options.memoryMb, loss.reason)
          if (note !== undefined) yield* deliver("stderr", encoder.encode(note))
          settle(leader)
        })

      const process: ProcessSpawner.Process = {
        pid,
        openPipes: (sinks) => execPipes(sinks, readPipes),
        exit: latch.exit,
        onExit: latch.onExit,
        signalGroup: (signal) =>
          box.gone
            ? Effect.void
            : (signal === "SIGKILL" ? killGroupOrBox(box, pid) : Effect.asVoid(engine.signalGroup(box.id, pid, signal))).pipe(
              Effect.catchAll((error) => loss.failed(`could not signal group ${pid} in ${box.id.slice(0, 12)}`, error))
            ),
        // The wrapper answers while it runs: the leader is a member until its status is written, and
        // then the wrapper watches the rest until none is left. Once it has ended, the engine answers.
        groupAlive: Effect.suspend(() => {
          if (box.gone) return Effect.succeed(false)
          const leader = status.read()
          if (!outputEnded) return Effect.succeed(leader === undefined || leader.groupAlive)
          if (leader !== undefined && !leader.groupAlive) return Effect.succeed(false)
          return engine.groupAlive(box.id, pid).pipe(
            Effect.catchAll((error) => Effect.as(loss.failed(`could not look at group ${pid} in ${box.id.slice(0, 12)}`, error), false))
          )
        })
      }
      return process
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
