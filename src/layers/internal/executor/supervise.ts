/**
 * Watching one spawned group from start to settle: read both pipes into their collectors, wait for
 * the first of exit / timeout / abort / kill request, run the kill path when needed (including for
 * leftovers of a shell that exited), drain the pipes within a bound, and finish the collectors.
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Option from "effect/Option"
import * as Runtime from "effect/Runtime"
import * as Scope from "effect/Scope"
import type { BashExecutor } from "../../../services/BashExecutor.js"
import type { ProcessSpawner } from "../../../services/ProcessSpawner.js"
import { afterMillis, whenDone } from "../whenDone.js"
import { killGroup, withinGrace } from "./killGroup.js"
import type { StreamCollector } from "./StreamCollector.js"

/**
 * Where one pipe's chunks go: a call's `StreamCollector`, or what a probe keeps of its output.
 */
export type Collector = Pick<StreamCollector, "offer" | "finish">

/**
 * Why supervision stopped waiting.
 */
export type SettleCause = "exit" | "timeout" | "abort" | "kill"

/**
 * What one supervision produced.
 */
export interface Supervised {
  readonly cause: SettleCause
  readonly exit: ProcessSpawner.Exit
  readonly stdout: BashExecutor.CollectedOutput
  readonly stderr: BashExecutor.CollectedOutput
}

/**
 * Inputs of one supervision.
 */
export interface SuperviseOptions {
  readonly process: ProcessSpawner.Process
  readonly stdout: Collector
  readonly stderr: Collector
  readonly graceMs: number
  /** Absent for background processes. */
  readonly timeoutMs?: number
  readonly signal?: AbortSignal
  /** Completes when someone asks to kill the process. */
  readonly killRequest?: Effect.Effect<void>
  /** Completes when the host escalates: kills SIGKILL at once and pipes are not waited for. */
  readonly escalation?: Effect.Effect<void>
  /**
   * Gives the wait back the caller's interruptibility. The caller spawns in an
   * `uninterruptibleMask` and passes its `restore`, so no interruption can land between the spawn
   * and the kill finalizer.
   */
  readonly restore: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
}

const unknownExit: ProcessSpawner.Exit = { exitCode: null, signal: null }

/**
 * The least time a killed command's exit report is awaited: once its group is dead its status is
 * certain, only the report may lag (it comes through the host's event loop, which a loaded machine
 * schedules late). An escalation ends the wait.
 */
const exitReportMs = 2_000

/**
 * The first value `register` settles with, awaited in one callback: `register` subscribes to its
 * sources (it may settle at once) and returns what unsubscribes them all, which runs exactly once —
 * on the first settle, or on interruption.
 */
const firstOf = <A>(register: (settle: (value: A) => void) => () => void): Effect.Effect<A> =>
  Effect.async<A>((resume) => {
    let settled = false
    let unsubscribe: (() => void) | undefined
    const settle = (value: A) => {
      if (settled) return
      settled = true
      unsubscribe?.()
      resume(Effect.succeed(value))
    }
    unsubscribe = register(settle)
    if (settled) return unsubscribe()
    return Effect.sync(unsubscribe)
  })

/**
 * The first of exit / timeout / abort / kill request, awaited in one callback. With `pipes`, a sink's
 * work before that ends the wait as `"work"`, for the caller to start a reading fiber and wait again.
 */
function firstTrigger(
  runtime: Runtime.Runtime<never>,
  options: SuperviseOptions,
  timeoutMs: number | undefined,
  pipes: ProcessSpawner.OpenPipes
): Effect.Effect<SettleCause | "work">
function firstTrigger(
  runtime: Runtime.Runtime<never>,
  options: SuperviseOptions,
  timeoutMs: number | undefined
): Effect.Effect<SettleCause>
function firstTrigger(
  runtime: Runtime.Runtime<never>,
  options: SuperviseOptions,
  timeoutMs: number | undefined,
  pipes?: ProcessSpawner.OpenPipes
): Effect.Effect<SettleCause | "work"> {
  return firstOf<SettleCause | "work">((settle) => {
    const { killRequest, process, signal } = options
    let removePipesListener: (() => void) | undefined
    const onPipes = () => {
      if (pipes === undefined || pipes.ended) return
      if (pipes.hasWork) return settle("work")
      removePipesListener = pipes.onChange(onPipes)
    }
    const onAbort = () => settle("abort")
    const removeExitListener = process.onExit(() => settle("exit"))
    onPipes()
    const stopTimer = timeoutMs === undefined
      ? undefined
      : afterMillis(runtime, timeoutMs, () => settle("timeout"))
    const stopKillRequest = killRequest === undefined ? undefined : whenDone(runtime, killRequest, () => settle("kill"))
    signal?.addEventListener("abort", onAbort, { once: true })
    if (signal?.aborted) settle("abort")
    return () => {
      stopTimer?.()
      stopKillRequest?.()
      removeExitListener()
      removePipesListener?.()
      signal?.removeEventListener("abort", onAbort)
    }
  })
}

/**
 * After the group is gone, the end of its pipes awaited in one callback within `graceMs` (a daemon
 * that escaped the group may hold them open): `"work"` when a sink's work needs a reading fiber.
 */
const pipesEnd = (
  runtime: Runtime.Runtime<never>,
  pipes: ProcessSpawner.OpenPipes,
  graceMs: number
): Effect.Effect<"ended" | "work" | "grace"> =>
  firstOf<"ended" | "work" | "grace">((settle) => {
    let removeListener: (() => void) | undefined
    const onPipes = () => {
      if (pipes.hasWork) return settle("work")
      if (pipes.ended) return settle("ended")
      removeListener = pipes.onChange(onPipes)
    }
    onPipes()
    const stopTimer = afterMillis(runtime, graceMs, () => settle("grace"))
    return () => {
      stopTimer()
      removeListener?.()
    }
  })

/**
 * Supervises `options.process` until it has settled. If the calling fiber is interrupted first, the
 * group is killed through the same path before the scope's other finalizers run.
 */
export const supervise = (options: SuperviseOptions): Effect.Effect<Supervised, never, Scope.Scope> =>
  Effect.gen(function*() {
    const { escalation, graceMs, process } = options
    let pipes: ProcessSpawner.OpenPipes | undefined
    let settled = false
    let finished = false
    const finishBoth = Effect.zip(options.stdout.finish, options.stderr.finish)
    // The group is killed first, then the spill files are closed. A plain scope finalizer: it needs
    // none of this fiber's refs (`Effect.addFinalizer` would capture them).
    yield* Scope.addFinalizer(
      yield* Effect.scope,
      Effect.suspend(() => {
        // The pipes feed the collectors until the group is dead, as a reading fiber would.
        const finish = Effect.suspend(() => {
          pipes?.close()
          return finishBoth
        })
        return finished ? Effect.void : settled ? finish : Effect.zipRight(killGroup(process, graceMs, escalation), finish)
      })
    )
    const untilSettled = Effect.gen(function*() {
      const clock = yield* Effect.clock
      const runtime = yield* Effect.runtime<never>()
      // Chunks reach the sinks from the pipes' callbacks; a reading fiber only when a sink has work.
      pipes = process.openPipes({
        stdout: (chunk) => options.stdout.offer(chunk),
        stderr: (chunk) => options.stderr.offer(chunk)
      })
      let readers: Fiber.RuntimeFiber<void> | undefined
      const started = clock.unsafeCurrentTimeMillis()
      const first = yield* firstTrigger(runtime, options, options.timeoutMs, pipes)
      let cause: SettleCause
      if (first === "work") {
        readers = yield* Effect.fork(pipes.drain)
        const elapsed = clock.unsafeCurrentTimeMillis() - started
        const left = options.timeoutMs === undefined ? undefined : Math.max(0, options.timeoutMs - elapsed)
        cause = yield* firstTrigger(runtime, options, left)
      } else {
        cause = first
      }

      // After a clean exit, anything still in the group is a leftover (`cmd &`): same kill path.
      if (cause !== "exit" || (yield* process.groupAlive)) {
        yield* Effect.uninterruptible(killGroup(process, graceMs, escalation))
      }
      const exit = cause === "exit" || (yield* withinGrace(process.exit, Math.max(graceMs, exitReportMs), escalation))
        ? yield* process.exit
        : unknownExit
      settled = true
      // A daemon that escaped the group may hold the pipes open: drain within the grace bound only.
      // Without a reading fiber, the wait is one more callback unless an escalation must cut it short.
      let drainMs = graceMs
      if (readers === undefined && !pipes.ended) {
        const waited = clock.unsafeCurrentTimeMillis()
        if (escalation !== undefined || (yield* pipesEnd(runtime, pipes, graceMs)) === "work") {
          readers = yield* Effect.fork(pipes.drain)
          drainMs = Math.max(0, graceMs - (clock.unsafeCurrentTimeMillis() - waited))
        }
      }
      if (readers !== undefined) {
        if (Option.isNone(yield* Fiber.poll(readers))) yield* withinGrace(Fiber.join(readers), drainMs, escalation)
        yield* Fiber.interrupt(readers)
      }
      pipes?.close()
      const [stdout, stderr] = yield* finishBoth
      // Finished once: the finalizer need not close the files and decode the tails again.
      finished = true
      return { cause, exit, stdout, stderr }
    })
    return yield* options.restore(untilSettled)
  })
