/**
 * A scriptable `ProcessSpawner` for deterministic tests: no processes, no real time. A test decides
 * how each "process" reacts to signals, feeds its pipes, ends it, and reads back which signals were
 * sent and when (by the Effect `Clock`, so `TestClock` drives everything).
 *
 * @since 0.1.0
 */
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Queue from "effect/Queue"
import * as Ref from "effect/Ref"
import type { SpawnError } from "../services/ProcessSpawner.js"
import { ProcessSpawner } from "../services/ProcessSpawner.js"

/**
 * How a fake group reacts to SIGTERM. SIGKILL always kills every member.
 * - `obey`: the leader dies of SIGTERM, the group is gone, the pipes close.
 * - `ignore`: nothing happens.
 * - `leader-only`: the leader dies of SIGTERM but a straggler keeps the group (and pipes) alive.
 *
 * @since 0.1.0
 * @category models
 */
export type FakeTermBehaviour = "obey" | "ignore" | "leader-only"

/**
 * The script for one spawn.
 *
 * @since 0.1.0
 * @category models
 */
export interface FakeScript {
  readonly onTerm: FakeTermBehaviour
  /** Fail the spawn instead of starting. */
  readonly spawnError?: SpawnError
  /** Pipes stay open after every member is dead (a daemon that escaped the group holds them). */
  readonly pipesOutliveGroup?: boolean
}

/**
 * A signal the executor sent, stamped with the Clock's time.
 *
 * @since 0.1.0
 * @category models
 */
export interface SentSignal {
  readonly signal: ProcessSpawner.GroupSignal
  readonly atMillis: number
}

/**
 * The test's handle on one fake process.
 *
 * @since 0.1.0
 * @category models
 */
export interface FakeProcess {
  readonly pid: number
  readonly options: ProcessSpawner.Options
  readonly signals: Effect.Effect<ReadonlyArray<SentSignal>>
  readonly writeStdout: (data: string | Uint8Array) => Effect.Effect<void>
  readonly writeStderr: (data: string | Uint8Array) => Effect.Effect<void>
  /** Closes both pipes (every writer is gone). */
  readonly closePipes: Effect.Effect<void>
  /** The leader exits; `alsoGroup` (default true) says the rest of the group goes with it. */
  readonly exit: (exit: ProcessSpawner.Exit, options?: { readonly alsoGroup?: boolean }) => Effect.Effect<void>
  /** Whether any member is alive. */
  readonly alive: Effect.Effect<boolean>
}

/**
 * Control surface of the fake spawner.
 *
 * @since 0.1.0
 * @category tags
 */
export class FakeSpawnerControl extends Context.Tag("effect-bash/FakeSpawnerControl")<
  FakeSpawnerControl,
  {
    /** Waits for the next spawn (in order) and returns its handle. */
    readonly next: Effect.Effect<FakeProcess>
    /** How many spawns succeeded so far. */
    readonly spawnCount: Effect.Effect<number>
  }
>() {}

const encoder = new TextEncoder()
const bytes = (data: string | Uint8Array) => (typeof data === "string" ? encoder.encode(data) : data)

const makeFakeProcess = (pid: number, options: ProcessSpawner.Options, script: FakeScript) =>
  Effect.gen(function*() {
    const stdout = yield* Queue.unbounded<Option.Option<Uint8Array>>()
    const stderr = yield* Queue.unbounded<Option.Option<Uint8Array>>()
    const exited = yield* Deferred.make<ProcessSpawner.Exit>()
    const groupAlive = yield* Ref.make(true)
    const signals = yield* Ref.make<ReadonlyArray<SentSignal>>([])
    let exitValue: ProcessSpawner.Exit | undefined
    let exitListeners: Array<(exit: ProcessSpawner.Exit) => void> = []
    const settleExit = (result: ProcessSpawner.Exit) =>
      Effect.flatMap(Deferred.succeed(exited, result), (first) =>
        first
          ? Effect.sync(() => {
            exitValue = result
            const listeners = exitListeners
            exitListeners = []
            for (const listener of listeners) listener(result)
          })
          : Effect.void)

    const closePipes = Effect.all([stdout.offer(Option.none()), stderr.offer(Option.none())], { discard: true })
    const exit = (result: ProcessSpawner.Exit, exitOptions?: { readonly alsoGroup?: boolean }) =>
      Effect.gen(function*() {
        yield* settleExit(result)
        if (exitOptions?.alsoGroup ?? true) {
          yield* Ref.set(groupAlive, false)
          if (!script.pipesOutliveGroup) yield* closePipes
        }
      })
    const groupDies = Effect.gen(function*() {
      yield* Ref.set(groupAlive, false)
      if (!script.pipesOutliveGroup) yield* closePipes
    })

    const signalGroup = (signal: ProcessSpawner.GroupSignal) =>
      Effect.gen(function*() {
        const atMillis = yield* Clock.currentTimeMillis
        yield* Ref.update(signals, (sent) => [...sent, { signal, atMillis }])
        if (!(yield* Ref.get(groupAlive))) return
        if (signal === "SIGKILL") {
          yield* settleExit({ exitCode: null, signal: "SIGKILL" })
          return yield* groupDies
        }
        if (script.onTerm === "ignore") return
        yield* settleExit({ exitCode: null, signal: "SIGTERM" })
        if (script.onTerm === "obey") yield* groupDies
      })

    // Each pipe delivers in order until its close marker (or until the reader is closed); the two
    // pipes are read concurrently. Chunks wait in queues, so delivering them is always a fiber's work.
    const openPipes = (sinks: ProcessSpawner.OutputSinks): ProcessSpawner.OpenPipes => {
      let ended = false
      let closed = false
      let listeners: Array<() => void> = []
      const pipe = (queue: Queue.Queue<Option.Option<Uint8Array>>, sink: ProcessSpawner.OutputSink) =>
        Effect.gen(function*() {
          while (!closed) {
            const next = yield* Queue.take(queue)
            if (Option.isNone(next) || closed) return
            const work = sink(next.value)
            if (work !== undefined) yield* work
          }
        })
      return {
        get ended() {
          return ended
        },
        get hasWork() {
          return !ended
        },
        onChange: (listener) => {
          listeners.push(listener)
          return () => {
            listeners = listeners.filter((each) => each !== listener)
          }
        },
        drain: Effect.all([pipe(stdout, sinks.stdout), pipe(stderr, sinks.stderr)], { concurrency: 2, discard: true })
          .pipe(Effect.tap(() => {
            ended = true
            const waiting = listeners
            listeners = []
            for (const listener of waiting) listener()
          })),
        close: () => {
          closed = true
        }
      }
    }

    const spawned: ProcessSpawner.Process = {
      pid,
      openPipes,
      exit: Deferred.await(exited),
      onExit: (listener) => {
        if (exitValue !== undefined) {
          listener(exitValue)
          return () => {}
        }
        exitListeners.push(listener)
        return () => {
          exitListeners = exitListeners.filter((each) => each !== listener)
        }
      },
      signalGroup,
      groupAlive: Ref.get(groupAlive)
    }
    const control: FakeProcess = {
      pid,
      options,
      signals: Ref.get(signals),
      writeStdout: (data) => stdout.offer(Option.some(bytes(data))),
      writeStderr: (data) => stderr.offer(Option.some(bytes(data))),
      closePipes,
      exit,
      alive: Ref.get(groupAlive)
    }
    return { spawned, control }
  })

/**
 * Builds the fake: `script` decides each spawn's behaviour (default: obey SIGTERM).
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (
  script: (options: ProcessSpawner.Options) => FakeScript = () => ({ onTerm: "obey" })
): Layer.Layer<ProcessSpawner | FakeSpawnerControl> =>
  Layer.effectContext(
    Effect.gen(function*() {
      const spawned = yield* Queue.unbounded<FakeProcess>()
      const count = yield* Ref.make(0)
      const spawn = (options: ProcessSpawner.Options) =>
        Effect.gen(function*() {
          const behaviour = script(options)
          if (behaviour.spawnError) return yield* Effect.fail(behaviour.spawnError)
          const pid = 1000 + (yield* Ref.updateAndGet(count, (n) => n + 1))
          const { control, spawned: process } = yield* makeFakeProcess(pid, options, behaviour)
          yield* spawned.offer(control)
          return process
        })
      return Context.make(ProcessSpawner, ProcessSpawner.of({ spawn })).pipe(
        Context.add(FakeSpawnerControl, { next: spawned.take, spawnCount: Ref.get(count) })
      )
    })
  )

