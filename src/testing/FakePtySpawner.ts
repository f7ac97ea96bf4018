/**
 * A scriptable `PtySpawner` for deterministic terminal tests: no processes, no real time. A test
 * decides what each fake shell prints, which group holds its foreground and whether it waits for
 * input, how it reacts to signals, and reads back what was written and signalled (stamped with the
 * Effect `Clock`, so `TestClock` drives readiness, silence, timeouts and close). Its output keeps to
 * the receiver's budget as a real PTY's does: once `onData` says no more, what the shell prints waits
 * (in order, the exit after it) until the receiver resumes it.
 *
 * @since 0.2.0
 */
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { PtySpawner, PtySpawnError } from "../services/PtySpawner.js"

/**
 * The controlled prompt as a shell under `TerminalsLive` prints it: the private marker, then `dsh> `.
 *
 * @since 0.2.0
 * @category constants
 */
export const promptText = "\x1b]133;D;0\x07dsh> "

/**
 * A signal the terminals sent, to one group or to every process of the terminal (`"all"`).
 *
 * @since 0.2.0
 * @category models
 */
export interface SentSignal {
  readonly target: number | "all"
  readonly signal: PtySpawner.Signal
  readonly atMillis: number
}

/**
 * The test's handle on one fake PTY.
 *
 * @since 0.2.0
 * @category models
 */
export interface FakePty {
  readonly pid: number
  readonly options: PtySpawner.Options
  /** Everything written to it, in order. */
  readonly written: ReadonlyArray<string>
  readonly signals: ReadonlyArray<SentSignal>
  /** Prints `chunk` as the terminal's output. */
  readonly emit: (chunk: string) => void
  /** Prints the controlled prompt, the shell back in the foreground waiting for input. */
  readonly prompt: () => void
  /** Sets the foreground group; a group waiting again after this call counts as woken up. */
  readonly setForeground: (foreground: { readonly pgid: number; readonly readingInput: boolean } | undefined) => void
  /** The shell exits (every process of the terminal is gone). */
  readonly exit: (exit?: PtySpawner.Exit) => void
  /** The shell's other processes ({@link Script.children}) end. */
  readonly endChildren: () => void
  readonly alive: () => number
  /** The PTY's flow control so far. */
  readonly flow: () => Flow
}

/**
 * A fake PTY's flow control: whether it is not being read now, how often it was stopped and
 * resumed, and how much output waits for the reader (as in a full kernel buffer).
 *
 * @since 0.2.0
 * @category models
 */
export interface Flow {
  readonly paused: boolean
  readonly pauses: number
  readonly resumes: number
  readonly waitingChunks: number
}

/**
 * How the fake shells behave: what a spawn does first (default: print the prompt), what a write
 * does (default: nothing), and whether the shell survives TERM and HUP (`stubborn`: only KILL ends it).
 *
 * @since 0.2.0
 * @category models
 */
export interface Script {
  readonly onSpawn?: (pty: FakePty) => void
  readonly onWrite?: (pty: FakePty, data: string) => void
  readonly stubborn?: boolean
  /**
   * Processes of the terminal besides the shell (default none): they end on a TERM or HUP to every
   * process unless `stubbornChildren`, on KILL, or when the test ends them.
   */
  readonly children?: number
  /** The {@link children} survive TERM and HUP: only KILL (or the test) ends them. */
  readonly stubbornChildren?: boolean
  /** How long each resume takes, on the Clock: the receiver falls behind while the output waits. */
  readonly resumeDelayMs?: number
  /** How long each spawn takes, on the Clock (a real one waits, e.g. for `node-pty` to load). */
  readonly spawnDelayMs?: number
  /** Fail every spawn with this error. */
  readonly spawnError?: PtySpawnError
}

/**
 * The fake spawner and the PTYs it started, newest last.
 *
 * @since 0.2.0
 * @category models
 */
export interface FakePtySpawner {
  readonly layer: Layer.Layer<PtySpawner>
  readonly ptys: ReadonlyArray<FakePty>
}

/**
 * A fake spawner following `script`.
 *
 * @since 0.2.0
 * @category constructors
 */
export const make = (script: Script = {}): FakePtySpawner => {
  const ptys: Array<FakePty> = []
  let nextPid = 1000
  const spawn = (options: PtySpawner.Options) =>
    Effect.gen(function*() {
      if (script.spawnDelayMs !== undefined) yield* Effect.sleep(script.spawnDelayMs)
      if (script.spawnError !== undefined) return yield* Effect.fail(script.spawnError)
      const pid = nextPid
      nextPid += 100
      const written: Array<string> = []
      const signals: Array<SentSignal> = []
      let members = 1
      let children = script.children ?? 0
      let exited = false
      let foreground: PtySpawner.Foreground | undefined = { pgid: pid, readingInput: false, wakeups: 0 }
      let paused = false
      let pauses = 0
      let resumes = 0
      // What the shell printed (and its exit) while the PTY was not read, in order.
      const waiting: Array<{ readonly chunk: string } | { readonly exit: PtySpawner.Exit }> = []
      const deliver = (chunk: string) => {
        if (options.onData(chunk) === false) {
          paused = true
          pauses++
        }
      }
      const drain = () => {
        while (!paused && waiting.length > 0) {
          const next = waiting.shift()!
          if ("chunk" in next) deliver(next.chunk)
          else options.onExit(next.exit)
        }
      }
      const exit = (result: PtySpawner.Exit = { exitCode: 0, signal: null }) => {
        if (exited) return
        exited = true
        members = 0
        children = 0
        foreground = undefined
        if (paused) waiting.push({ exit: result })
        else options.onExit(result)
      }
      const record = (target: number | "all", signal: PtySpawner.Signal) =>
        Effect.map(Clock.currentTimeMillis, (atMillis) => {
          signals.push({ target, signal, atMillis })
        })
      const dies = (signal: PtySpawner.Signal) =>
        signal === "SIGKILL" || (!script.stubborn && (signal === "SIGTERM" || signal === "SIGHUP"))
      const pty: FakePty = {
        pid,
        options,
        written,
        signals,
        emit: (chunk) => {
          if (exited) return
          if (paused) waiting.push({ chunk })
          else deliver(chunk)
        },
        prompt: () => {
          pty.setForeground({ pgid: pid, readingInput: true })
          pty.emit(promptText)
        },
        setForeground: (next) => {
          foreground = next === undefined || exited
            ? undefined
            : { ...next, wakeups: (foreground?.wakeups ?? 0) + 1 }
        },
        exit,
        endChildren: () => {
          children = 0
        },
        alive: () => members + children,
        flow: () => ({ paused, pauses, resumes, waitingChunks: waiting.filter((item) => "chunk" in item).length })
      }
      ptys.push(pty)
      const port: PtySpawner.Pty = {
        pid,
        write: (data) =>
          Effect.sync(() => {
            written.push(data)
            script.onWrite?.(pty, data)
          }),
        resume: Effect.suspend(() => {
          if (!paused) return Effect.void
          const resumed = Effect.sync(() => {
            paused = false
            resumes++
            drain()
          })
          return script.resumeDelayMs === undefined ? resumed : Effect.zipRight(Effect.sleep(script.resumeDelayMs), resumed)
        }),
        foreground: Effect.sync(() => foreground),
        signalGroup: (pgid, signal) =>
          Effect.zipRight(
            record(pgid, signal),
            Effect.sync(() => {
              if (exited) return false
              if (pgid === pid && dies(signal)) exit({ exitCode: null, signal })
              return true
            })
          ),
        signalAll: (signal) =>
          Effect.zipRight(
            record("all", signal),
            Effect.sync(() => {
              if (signal === "SIGKILL" || (!script.stubbornChildren && (signal === "SIGTERM" || signal === "SIGHUP"))) {
                children = 0
              }
              if (dies(signal)) exit({ exitCode: null, signal })
              return members + children
            })
          ),
        alive: Effect.sync(() => members + children),
        othersAlive: Effect.sync(() => children)
      }
      yield* Effect.addFinalizer(() => Effect.sync(() => exit({ exitCode: null, signal: "SIGKILL" })))
      if (script.onSpawn === undefined) pty.prompt()
      else script.onSpawn(pty)
      return port
    })
  return { layer: Layer.succeed(PtySpawner, PtySpawner.of({ spawn })), ptys }
}
