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

/**
 * One fake pipe: what was written before the pipes were opened waits here, as a real pipe's bytes
 * wait in the kernel (and in the spawner's hold) until a reader takes them.
 */
interface FakePipe {
  written: Array<Uint8Array>
  closed: boolean
  /** The reader's hooks, once the pipes are open. */
  reader: { readonly data: (chunk: Uint8Array) => void; readonly end: () => void } | undefined
}

const fakePipe = (): FakePipe => ({ written: [], closed: false, reader: undefined })

const write = (pipe: FakePipe, chunk: Uint8Array) =>
  Effect.sync(() => {
    if (pipe.closed) return
    if (pipe.reader === undefined) pipe.written.push(chunk)
    else pipe.reader.data(chunk)
  })

const close = (pipe: FakePipe) =>
  Effect.sync(() => {
    if (pipe.closed) return
    pipe.closed = true
    pipe.reader?.end()
  })

/**
 * Delivers both pipes into `sinks` as the real spawner's reader does: a chunk goes to its sink from
 * the write itself; only a sink's work (and the chunks that queue behind it) needs `drain`, and
 * `hasWork` says so. So a supervisor waits on the fake in the same callback as on a real process.
 */
const openFakePipes = (pipes: ReadonlyArray<readonly [FakePipe, ProcessSpawner.OutputSink]>): ProcessSpawner.OpenPipes => {
  // `busy`: the drain owns delivery (work is pending or chunks are queued); writes only queue.
  let busy = false
  let work: Effect.Effect<void> | undefined
  let queued: Array<readonly [Uint8Array, ProcessSpawner.OutputSink]> = []
  let open = 0
  let stopped = false
  let listener: (() => void) | undefined
  const signal = () => {
    const waiting = listener
    listener = undefined
    waiting?.()
  }
  for (const [pipe, sink] of pipes) {
    const data = (chunk: Uint8Array) => {
      if (stopped) return
      if (busy) return void queued.push([chunk, sink])
      work = sink(chunk)
      if (work === undefined) return
      busy = true
      signal()
    }
    const earlier = pipe.written
    pipe.written = []
    for (const chunk of earlier) data(chunk)
    if (pipe.closed) continue
    open++
    pipe.reader = {
      data,
      end: () => {
        open--
        signal()
      }
    }
  }
  const arrival = Effect.async<void>((resume) => {
    if (work !== undefined || open === 0) return resume(Effect.void)
    listener = () => resume(Effect.void)
    return Effect.sync(() => {
      listener = undefined
    })
  })
  const stop = () => {
    stopped = true
  }
  return {
    get ended() {
      return open === 0 && !busy
    },
    get hasWork() {
      return busy
    },
    onChange: (next) => {
      listener = next
      return () => {
        if (listener === next) listener = undefined
      }
    },
    drain: Effect.gen(function*() {
      while (!stopped) {
        if (work !== undefined) {
          const pending = work
          work = undefined
          yield* pending
        }
        while (queued.length > 0 && !stopped) {
          const batch = queued
          queued = []
          for (const [chunk, sink] of batch) {
            const next = sink(chunk)
            if (next !== undefined) yield* next
          }
        }
        busy = false
        if (open === 0) return
        yield* arrival
      }
    }).pipe(Effect.ensuring(Effect.sync(stop))),
    close: stop
  }
}

const makeFakeProcess = (pid: number, options: ProcessSpawner.Options, script: FakeScript) =>
  Effect.gen(function*() {
    const stdout = fakePipe()
    const stderr = fakePipe()
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

    const closePipes = Effect.zipRight(close(stdout), close(stderr))
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

    const openPipes = (sinks: ProcessSpawner.OutputSinks): ProcessSpawner.OpenPipes =>
      openFakePipes([[stdout, sinks.stdout], [stderr, sinks.stderr]])

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
      writeStdout: (data) => write(stdout, bytes(data)),
      writeStderr: (data) => write(stderr, bytes(data)),
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

