/**
 * Watching one spawned group from start to settle: read both pipes into their collectors, wait for
 * the first of exit / timeout / abort / kill request, run the kill path when needed (including for
 * leftovers of a shell that exited), drain the pipes within a bound, and finish the collectors.
 *
 * @internal
 */
import { Clock, Effect, Fiber, Option, Scope } from "effect"
import type { BashExecutor } from "../../../services/BashExecutor.js"
import { awaitAbort } from "../../../services/internal/awaitAbort.js"
import type { ProcessSpawner } from "../../../services/ProcessSpawner.js"
import { killGroup, withinGrace } from "./killGroup.js"
import type { StreamCollector } from "./StreamCollector.js"

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
  readonly stdout: StreamCollector
  readonly stderr: StreamCollector
  readonly graceMs: number
  /** Absent for background processes. */
  readonly timeoutMs?: number
  readonly signal?: AbortSignal
  /** Completes when someone asks to kill the process. */
  readonly killRequest?: Effect.Effect<void>
  /** Completes when the host escalates: kills SIGKILL at once and pipes are not waited for. */
  readonly escalation?: Effect.Effect<void>
}

const unknownExit: ProcessSpawner.Exit = { exitCode: null, signal: null }

/** The first of exit / timeout / abort / kill request, each raced on a fiber of its own. */
const raceTriggers = (options: SuperviseOptions): Effect.Effect<SettleCause> => {
  const triggers: Array<Effect.Effect<SettleCause>> = [Effect.as(options.process.exit, "exit" as const)]
  if (options.timeoutMs !== undefined) triggers.push(Effect.as(Effect.sleep(options.timeoutMs), "timeout" as const))
  if (options.signal !== undefined) triggers.push(Effect.as(awaitAbort(options.signal), "abort" as const))
  if (options.killRequest !== undefined) triggers.push(Effect.as(options.killRequest, "kill" as const))
  return Effect.raceAll(triggers)
}

// Effect's live Clock sleeps on a plain timer, and never wakes past the JS timer limit; its `sleep`
// is one shared method, so comparing it tells the live clock from any other (a TestClock).
const liveSleep = Clock.make().sleep
const maxTimerMs = 2 ** 31 - 1

/**
 * {@link raceTriggers} without the fibers (a good part of a short call's cost): on the live clock,
 * with a spawner that reports exit as a callback and no kill request, exit, the timer and the abort
 * signal are awaited in one callback. Any other clock or process takes the fibers' way.
 */
const settleCause = (options: SuperviseOptions): Effect.Effect<SettleCause> =>
  Effect.clockWith((clock) => {
    const { process, signal, timeoutMs } = options
    const onExit = process.onExit
    if (clock.sleep !== liveSleep || onExit === undefined || options.killRequest !== undefined) {
      return raceTriggers(options)
    }
    return Effect.async<SettleCause>((resume) => {
      let timer: ReturnType<typeof setTimeout> | undefined
      let removeExitListener: (() => void) | undefined
      let settled = false
      const onAbort = () => settle("abort")
      const cleanup = () => {
        if (timer !== undefined) clearTimeout(timer)
        removeExitListener?.()
        signal?.removeEventListener("abort", onAbort)
      }
      const settle = (cause: SettleCause) => {
        if (settled) return
        settled = true
        cleanup()
        resume(Effect.succeed(cause))
      }
      removeExitListener = onExit(() => settle("exit"))
      if (settled) return
      if (timeoutMs !== undefined && timeoutMs <= maxTimerMs) timer = setTimeout(() => settle("timeout"), timeoutMs)
      if (signal !== undefined) {
        if (signal.aborted) return settle("abort")
        signal.addEventListener("abort", onAbort, { once: true })
      }
      return Effect.sync(cleanup)
    })
  })

/**
 * Supervises `options.process` until it has settled. If the calling fiber is interrupted first, the
 * group is killed through the same path before the scope's other finalizers run.
 */
export const supervise = (options: SuperviseOptions): Effect.Effect<Supervised, never, Scope.Scope> =>
  Effect.gen(function*() {
    const { escalation, graceMs, process } = options
    let settled = false
    let finished = false
    const finishBoth = Effect.all([options.stdout.finish, options.stderr.finish])
    // The group is killed first, then the spill files are closed. A plain scope finalizer: it needs
    // none of this fiber's refs, and `Effect.addFinalizer`'s bookkeeping is a good part of a call.
    yield* Scope.addFinalizer(
      yield* Effect.scope,
      Effect.suspend(() =>
        finished ? Effect.void : settled ? finishBoth : Effect.zipRight(killGroup(process, graceMs, escalation), finishBoth)
      )
    )
    const readers = yield* Effect.fork(process.readPipes({
      stdout: (chunk) => options.stdout.offer(chunk),
      stderr: (chunk) => options.stderr.offer(chunk)
    }))

    const cause = yield* settleCause(options)

    // After a clean exit, anything still in the group is a leftover (`cmd &`): same kill path.
    if (cause !== "exit" || (yield* process.groupAlive)) {
      yield* Effect.uninterruptible(killGroup(process, graceMs, escalation))
    }
    const exit = cause === "exit"
      ? yield* process.exit
      : Option.getOrElse(yield* Effect.timeoutOption(process.exit, graceMs), () => unknownExit)
    settled = true
    // A daemon that escaped the group may hold the pipes open: drain within the grace bound only.
    if (Option.isNone(yield* Fiber.poll(readers))) yield* withinGrace(Fiber.join(readers), graceMs, escalation)
    yield* Fiber.interrupt(readers)
    const [stdout, stderr] = yield* finishBoth
    // Finished once: the finalizer need not close the files and decode the tails again.
    finished = true
    return { cause, exit, stdout, stderr }
  })
