/**
 * The `ProcessSpawner` port on a container engine: each spawn is an exec in the session's box whose
 * wrapper makes the command the leader of its own process group and reports its pid first; signals
 * and liveness go through further execs; the leader's end comes from the box's control directory.
 * The executor core above it is the local executor's: timeouts, TERM → grace → KILL, leftovers,
 * bounded drain and spill files work unchanged.
 *
 * @internal
 */
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as ExecutionStrategy from "effect/ExecutionStrategy"
import * as Exit from "effect/Exit"
import * as Scope from "effect/Scope"
import { ProcessSpawner, SpawnError } from "../../../services/ProcessSpawner.js"
import type { Box, Boxes } from "./Boxes.js"
import type { ContainerEngine } from "../../../services/ContainerEngine.js"
import type { LeaderStatus } from "./wrapper.js"
import { makeExitLatch } from "../spawner/exitLatch.js"
import { tooLongForArgv } from "../spawner/shellInvocation.js"
import { controlMount, envProblem, wrapperArgv, wrapperEnv } from "./wrapper.js"

const encoder = new TextEncoder()

/** How often the leader's status file is read when no watch event came (a safety net, not the path). */
const statusPollMs = 1_000

/** Bound on the wrapper's first line: the exec has started when the engine answered. */
const startTimeoutMs = 30_000

/** The session a spawn belongs to: its `DSH_SESSION_ID`, or the layer's own box without one. */
const sessionOf = (env: Readonly<Record<string, string>>): string => env.DSH_SESSION_ID ?? ""

/** The note a box removed mid-call leaves in stderr. */
export const boxGoneText = (box: string): string =>
  `effect-bash: the container ${box.slice(0, 12)} was removed while the command ran; the next command starts in a new one\n`

/** The note of a call whose engine stopped answering before the command's end came through: `reason` says why. */
export const engineLostText = (reason: string): string =>
  `effect-bash: the container engine stopped answering while the command ran, so how it ended is unknown (it is reported killed): ${reason}\n`

/** The note a command killed by the box's memory limit leaves in stderr. */
export const oomText = (memoryMb: number | undefined): string =>
  `effect-bash: killed by the container's memory limit${memoryMb === undefined ? "" : ` (${memoryMb} MB)`}\n`

/**
 * The note of a call whose wrapper's output ended without a status: the wrapper was killed, with the
 * box's processes (a restart) or by a process in the box, or the engine stopped answering.
 */
export const lostText =
  "effect-bash: the command's supervisor in the container stopped answering before it said how the command " +
  "ended; what was left of the command is killed\n"

export interface ContainerSpawnerOptions {
  readonly engine: ContainerEngine.Service
  readonly boxes: Boxes
  readonly memoryMb?: number | undefined
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

const spawnFailure = (message: string, code?: string) => new SpawnError({ code, message })

/** The session's box was gone when the exec was created: nothing started. */
class BoxGone extends Data.TaggedError("BoxGone")<{ readonly failure: SpawnError }> {}

export const makeContainerSpawner = (options: ContainerSpawnerOptions): ProcessSpawner["Type"] => {
  const { boxes, engine } = options

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
          return yield* spawnFailure(
            `the command's shell did not start in container ${box.id.slice(0, 12)}` +
              (said === "" ? (box.gone ? ": the container is gone" : "") : `: ${said}`) +
              // The engine looks for bash on the call's PATH when it sets one.
              (spawnOptions.env.PATH === undefined ? " (the image needs bash)" : ` (the image needs bash on PATH=${spawnOptions.env.PATH})`)
          )
        }
        return { exec, early, pid }
      }).pipe(Effect.onExit((exit) => Exit.isSuccess(exit) || startedNothing ? Effect.void : abandon))

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
      const readPipes = (sinks: ProcessSpawner.OutputSinks, closed: () => boolean) =>
        Effect.gen(function*() {
          const deliver = (frame: ContainerEngine.Frame) => closed() ? undefined : sinks[frame.stream](frame.bytes)
          for (const frame of early) {
            const work = deliver(frame)
            if (work !== undefined) yield* work
          }
          for (let frame = yield* exec.next; frame !== undefined; frame = yield* exec.next) {
            const work = deliver(frame)
            if (work !== undefined) yield* work
          }
          // Every writer has closed the pipes: the wrapper has exited, after writing its status if it could.
          outputEnded = true
          yield* status.settled
          const leader = status.read()
          // Without a status, the engine tells whether the box went; an engine that does not answer is the cause.
          const running = leader === undefined ? yield* Effect.either(engine.boxRunning(box.id)) : undefined
          if (running?._tag === "Right" && !running.right) box.gone = true
          const unreachable = running?._tag === "Left" && running.left._tag === "EngineUnavailable" ? running.left.message : undefined
          const note = leader === undefined
            ? (box.gone ? boxGoneText(box.id) : unreachable !== undefined ? engineLostText(unreachable) : lostText)
            : leader.oomKilled && leader.signal === "SIGKILL" ? oomText(options.memoryMb)
            : undefined
          if (note !== undefined) {
            const work = sinks.stderr(encoder.encode(note))
            if (work !== undefined) yield* work
          }
          settle(leader)
        })

      // Frames arrive only as the exec's stream is read, so delivering them is always a fiber's work:
      // `hasWork` holds until the stream has ended.
      const openPipes = (sinks: ProcessSpawner.OutputSinks): ProcessSpawner.OpenPipes => {
        let pipesEnded = false
        let closed = false
        let listeners: Array<() => void> = []
        return {
          get ended() {
            return pipesEnded
          },
          get hasWork() {
            return !pipesEnded
          },
          onChange: (listener) => {
            listeners.push(listener)
            return () => {
              listeners = listeners.filter((each) => each !== listener)
            }
          },
          drain: Effect.ensuring(
            readPipes(sinks, () => closed),
            Effect.sync(() => {
              pipesEnded = true
              const waiting = listeners
              listeners = []
              for (const listener of waiting) listener()
            })
          ),
          close: () => {
            closed = true
            listeners = []
          }
        }
      }

      const process: ProcessSpawner.Process = {
        pid,
        openPipes,
        exit: latch.exit,
        onExit: latch.onExit,
        signalGroup: (signal) =>
          box.gone
            ? Effect.void
            : (signal === "SIGKILL" ? killGroupOrBox(box, pid) : Effect.asVoid(engine.signalGroup(box.id, pid, signal))).pipe(
              Effect.catchAll((error) => Effect.logWarning(`could not signal group ${pid} in ${box.id.slice(0, 12)}`, error.message))
            ),
        // The wrapper answers while it runs: the leader is a member until its status is written, and
        // then the wrapper watches the rest until none is left. Once it has ended, the engine answers.
        groupAlive: Effect.suspend(() => {
          if (box.gone) return Effect.succeed(false)
          const leader = status.read()
          if (!outputEnded) return Effect.succeed(leader === undefined || leader.groupAlive)
          if (leader !== undefined && !leader.groupAlive) return Effect.succeed(false)
          return engine.groupAlive(box.id, pid).pipe(
            Effect.catchAll((error) =>
              Effect.as(Effect.logWarning(`could not look at group ${pid} in ${box.id.slice(0, 12)}`, error.message), false)
            )
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
