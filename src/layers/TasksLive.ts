/**
 * The in-memory background-task runtime behind the {@link Tasks} seam.
 *
 * Each task's work is supervised by a fiber in the layer's scope that awaits `work.done` and
 * records the outcome. Closing the layer's scope cancels every unfinished task and awaits each
 * settlement for at most `disposeTimeoutMs` (Clock time).
 *
 * Decisions the contract leaves open:
 * - An id is consumed when allocated: a launch that fails still uses up its `<kind>-<n>`, so ids
 *   are never reused (a producer may have named logs or files after it).
 * - Eviction drops the task that finished earliest (not the one started earliest), and with it any
 *   pending notice: an evicted task can no longer be read, so a notice pointing at it would mislead.
 * - `notifications` is meant for one consumer (the host's notifier); concurrent subscribers share
 *   the notices rather than each receiving all of them. Delivering a notice marks the task reported.
 *
 * @since 0.1.0
 */
import type * as Scope from "effect/Scope"
import * as Cause from "effect/Cause"
import * as Config from "effect/Config"
import * as ConfigError from "effect/ConfigError"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Exit from "effect/Exit"
import * as FiberSet from "effect/FiberSet"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Queue from "effect/Queue"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import {
  InvalidWaitTimeoutError,
  isTerminalStatus,
  TaskAccessError,
  Tasks,
  TasksUnavailableError
} from "../services/Tasks.js"
import { BackgroundRegistry } from "./internal/BackgroundRegistry.js"
import { decodeSettings, PositiveFinite, PositiveInt } from "./settingsSchema.js"

/**
 * The task runtime's settings, described once: each field optional on input, filled with its default
 * on decoding; a bad value fails the layer with a `ConfigError` naming the field.
 *
 * @since 0.1.0
 * @category schemas
 */
export const Settings = Schema.Struct({
  /** How many finished tasks are kept (the oldest-finished are evicted beyond it). */
  maxRetainedFinished: Schema.optionalWith(PositiveInt, { default: () => 100 }),
  /** How long disposal waits for each cancelled task to settle, in ms. */
  disposeTimeoutMs: Schema.optionalWith(PositiveFinite, { default: () => 10_000 })
}).annotations({ identifier: "TasksLive.Settings" })

/**
 * Every setting of the task runtime, defaults filled in.
 *
 * @since 0.1.0
 * @category models
 */
export interface Settings extends Schema.Schema.Type<typeof Settings> {}

/**
 * @since 0.1.0
 * @category models
 */
export declare namespace Settings {
  /**
   * What a user gives: any subset of the settings.
   *
   * @since 0.1.0
   * @category models
   */
  export type Input = Schema.Schema.Encoded<typeof Settings>
}

/**
 * The defaults, decoded from nothing.
 *
 * @since 0.1.0
 * @category constants
 */
export const defaults: Settings = Schema.decodeSync(Settings)({})

const noSurfaceMessage =
  "background tasks unavailable: no control surface is attached (compose the task tools: AgentToolsLive with a Tasks layer)"
const shutDownMessage = "background tasks unavailable: the task runtime has shut down"

interface TaskEntry {
  readonly id: string
  readonly owner: string | undefined
  readonly meta: Tasks.Meta
  readonly work: Tasks.Work
  readonly status: Tasks.Status
  readonly detail: string | undefined
  /** The owner has seen the final status; no notice is due. */
  readonly reported: boolean
  /** Completed with the final snapshot once the work has settled. */
  readonly settled: Deferred.Deferred<Tasks.Snapshot>
}

const snapshotOf = (entry: TaskEntry): Tasks.Snapshot => ({
  id: entry.id,
  kind: entry.meta.kind,
  label: entry.meta.label,
  owner: entry.meta.owner,
  status: entry.status,
  detail: entry.detail
})

const isValidWaitTimeout = (value: unknown): value is number =>
  typeof value === "number" && Number.isFinite(value) && value > 0

/** A `done` that died or was interrupted despite its "never fails" promise still ends the task. */
const abnormalOutcome = (cause: Cause.Cause<unknown>): Tasks.Outcome => {
  const error = Cause.squash(cause)
  const reason = Cause.isInterruptedOnly(cause)
    ? "interrupted"
    : error instanceof Error
    ? error.message
    : String(error)
  return { status: "failed", detail: `task work ended abnormally: ${reason}` }
}

const start = (config: Settings): Effect.Effect<Tasks["Type"], never, Scope.Scope> =>
  Effect.gen(function*() {
    // Acquisition order matters: finalizers run in reverse, so disposal (added last) runs first,
    // then leftover supervisors are interrupted, then the notice stream ends.
    const notices = yield* Effect.acquireRelease(
      Queue.sliding<string>(config.maxRetainedFinished),
      Queue.shutdown
    )
    const supervisors = yield* FiberSet.make<void>()
    // Entries are immutable snapshots replaced in place; every read-and-change below is one
    // `Effect.sync`, so no fiber sees a change half made. No cap on running tasks: each producer caps
    // its own work (the executor's processes, for one).
    const tasks = new BackgroundRegistry<TaskEntry>({
      maxRunning: Infinity,
      maxFinished: config.maxRetainedFinished,
      isRunning: (entry) => !isTerminalStatus(entry.status)
    })
    let open = true
    let surfaces = 0

    const access = (id: string, caller: string | undefined): Effect.Effect<TaskEntry, TaskAccessError> =>
      Effect.suspend(() =>
        Either.match(tasks.access(id, caller), {
          onLeft: (reason) => Effect.fail(new TaskAccessError({ id, reason })),
          onRight: Effect.succeed
        })
      )

    /** The current snapshot; an entry evicted meanwhile has settled, so its final snapshot stands. */
    const latest = (entry: TaskEntry): Effect.Effect<Tasks.Snapshot> =>
      Effect.suspend(() => {
        const now = tasks.get(entry.id)
        return now === undefined ? Deferred.await(entry.settled) : Effect.succeed(snapshotOf(now))
      })

    const markEntryReported = (id: string) =>
      Effect.sync(() => {
        const entry = tasks.get(id)
        if (entry !== undefined && isTerminalStatus(entry.status) && !entry.reported) tasks.set({ ...entry, reported: true })
      })

    /** Ids are never reused: a failed launch still consumes its id (the producer may have named things after it). */
    const allocateId = (kind: string): Effect.Effect<string, TasksUnavailableError> =>
      Effect.suspend(() => {
        if (!open) return Effect.fail(new TasksUnavailableError({ message: shutDownMessage }))
        if (surfaces === 0) return Effect.fail(new TasksUnavailableError({ message: noSurfaceMessage }))
        return Effect.succeed(tasks.nextId(kind))
      })

    const record = (id: string, outcome: Tasks.Outcome) =>
      Effect.gen(function*() {
        const finished = yield* Effect.sync((): TaskEntry | undefined => {
          const entry = tasks.get(id)
          if (entry === undefined || isTerminalStatus(entry.status)) return undefined
          const done: TaskEntry = { ...entry, status: outcome.status, detail: outcome.detail }
          tasks.set(done)
          tasks.finish(id)
          return done
        })
        if (finished === undefined) return
        yield* Deferred.succeed(finished.settled, snapshotOf(finished))
        if (!finished.reported) yield* Queue.offer(notices, id)
      })

    const supervise = (entry: TaskEntry) =>
      entry.work.done.pipe(
        Effect.exit,
        Effect.map(Exit.match({ onSuccess: (outcome) => outcome, onFailure: abnormalOutcome })),
        Effect.flatMap((outcome) => record(entry.id, outcome))
      )

    const start = Effect.fn("Tasks.start")(function*<E, R>(
      meta: Tasks.Meta,
      launch: (id: string) => Effect.Effect<Tasks.Work, E, R>
    ) {
      const id = yield* allocateId(meta.kind)
      yield* Effect.annotateCurrentSpan({ "task.id": id, "task.kind": meta.kind })
      return yield* Effect.uninterruptibleMask((restore) =>
        Effect.gen(function*() {
          const work = yield* restore(launch(id))
          const entry: TaskEntry = {
            id,
            owner: meta.owner,
            meta,
            work,
            status: "running",
            detail: undefined,
            reported: false,
            settled: yield* Deferred.make<Tasks.Snapshot>()
          }
          const registered = yield* Effect.sync(() => {
            if (open) tasks.set(entry)
            return open
          })
          if (!registered) {
            // Disposal began while launching: nothing would ever stop this work, so stop it now.
            yield* restore(work.cancel)
            return yield* new TasksUnavailableError({ message: shutDownMessage })
          }
          // Forked from an uninterruptible region, the supervisor would inherit it and block disposal.
          yield* FiberSet.run(supervisors, Effect.interruptible(supervise(entry)))
          return snapshotOf(entry)
        })
      )
    })

    const get = Effect.fn("Tasks.get")(function*(id: string, caller: string | undefined) {
      return snapshotOf(yield* access(id, caller))
    })

    const read = Effect.fn("Tasks.read")(function*(id: string, caller: string | undefined) {
      const before = yield* access(id, caller)
      const first = yield* before.work.read
      const task = yield* latest(before)
      if (!isTerminalStatus(task.status)) return { output: first, task }
      // It settled during the first read, so output may have arrived after it; the work is complete
      // now, so one more read drains it before the owner is shown the final status.
      const rest = isTerminalStatus(before.status) ? "" : yield* before.work.read
      yield* markEntryReported(id)
      return { output: first + rest, task }
    })

    const wait = Effect.fn("Tasks.wait")(function*(id: string, timeoutMs: number, caller: string | undefined) {
      if (!isValidWaitTimeout(timeoutMs)) return yield* new InvalidWaitTimeoutError({ value: timeoutMs })
      const entry = yield* access(id, caller)
      const settled = yield* Deferred.await(entry.settled).pipe(
        Effect.timeoutTo({ duration: Duration.millis(timeoutMs), onSuccess: Option.some, onTimeout: Option.none })
      )
      return Option.isSome(settled) ? settled.value : yield* latest(entry)
    })

    const list = Effect.fn("Tasks.list")(function*(caller: string | undefined) {
      return yield* Effect.sync(() => tasks.visibleTo(caller).map(snapshotOf))
    })

    const kill = Effect.fn("Tasks.kill")(function*(id: string, caller: string | undefined) {
      const entry = yield* access(id, caller)
      // Marking it stopping and delivering the cancel happen together: interrupted in between, the
      // task would show as stopping while nothing stops it (disposal does not cancel stopping tasks).
      return yield* Effect.uninterruptible(Effect.gen(function*() {
        const decision = yield* Effect.sync((): "cancel" | "requested" | "already-finished" => {
          const now = tasks.get(id)
          if (now === undefined || isTerminalStatus(now.status)) return "already-finished"
          if (now.status === "stopping") return "requested"
          tasks.set({ ...now, status: "stopping" })
          return "cancel"
        })
        if (decision !== "cancel") return decision
        yield* entry.work.cancel
        return "requested" as const
      }))
    })

    const markReported = Effect.fn("Tasks.markReported")(function*(id: string) {
      yield* markEntryReported(id)
    })

    /** Hands out a queued notice only if it is still due, and marks it delivered. */
    const claimNotice = (id: string) =>
      Effect.sync((): Option.Option<Tasks.Notice> => {
        const entry = tasks.get(id)
        if (entry === undefined || !isTerminalStatus(entry.status) || entry.reported) return Option.none()
        tasks.set({ ...entry, reported: true })
        return Option.some({ owner: entry.meta.owner, task: snapshotOf(entry) })
      })

    const notifications = Stream.fromQueue(notices).pipe(
      Stream.mapEffect(claimNotice),
      Stream.filterMap((notice) => notice),
      Stream.withSpan("Tasks.notifications")
    )

    const attachSurface = Effect.acquireRelease(
      Effect.sync(() => {
        surfaces++
      }),
      () =>
        Effect.sync(() => {
          surfaces--
        })
    ).pipe(Effect.withSpan("Tasks.attachSurface"))

    const stopAndAwait = (entry: TaskEntry, cancel: boolean) =>
      (cancel ? entry.work.cancel : Effect.void).pipe(
        Effect.zipRight(Deferred.await(entry.settled)),
        // A finalizer is uninterruptible; the timeout can only cut this wait if it is interruptible.
        Effect.interruptible,
        Effect.timeout(Duration.millis(config.disposeTimeoutMs)),
        Effect.ignore
      )

    yield* Effect.addFinalizer(() =>
      Effect.gen(function*() {
        const unfinished = yield* Effect.sync((): ReadonlyArray<readonly [TaskEntry, boolean]> => {
          const pending = tasks.running
          for (const entry of pending) tasks.set({ ...entry, status: "stopping" })
          open = false
          return pending.map((entry) => [entry, entry.status === "running"] as const)
        })
        yield* Effect.forEach(unfinished, ([entry, cancel]) => stopAndAwait(entry, cancel), {
          concurrency: "unbounded",
          discard: true
        })
      }).pipe(Effect.withSpan("Tasks.dispose"))
    )

    return { attachSurface, start, get, read, wait, list, kill, markReported, notifications } satisfies Tasks["Type"]
  })

/**
 * The task runtime in the current scope: checks `settings` (a bad value fails with a `ConfigError`
 * naming the field, `tasks: disposeTimeoutMs must be a positive finite number`) and fills the defaults.
 * Closing the scope cancels every unfinished task.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (settings: Settings.Input = {}): Effect.Effect<Tasks["Type"], ConfigError.ConfigError, Scope.Scope> =>
  decodeSettings(Settings, settings).pipe(
    Effect.mapError(({ field, message }) => ConfigError.InvalidData([field], `tasks: ${field} ${message}`)),
    Effect.flatMap(start)
  )

/**
 * The live task runtime, as a scoped layer providing {@link Tasks}.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (settings: Settings.Input = {}): Layer.Layer<Tasks, ConfigError.ConfigError> =>
  Layer.scoped(Tasks, make(settings))

/**
 * The live task runtime with its settings read through `Config`:
 * `layerConfig({ maxRetainedFinished: Config.integer("MY_TASKS_KEPT") })`.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerConfig = (config: Config.Config.Wrap<Settings.Input>): Layer.Layer<Tasks, ConfigError.ConfigError> =>
  Layer.unwrapEffect(Effect.map(Config.unwrap(config), layer))
