/**
 * A {@link BashExecutor} test double that runs nothing: it records every resolved spec it is asked to
 * run or start, answers foreground calls from a script, and hands out background processes that a
 * test drives by hand (emit output, finish, drop output).
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Ref from "effect/Ref"
import { BashExecutor } from "../services/BashExecutor.js"
import { LocalBashExecutor } from "../index.js"
import type { ResolveDefaults } from "../layers/resolveSpec.js"
import { resolveSpec } from "../layers/resolveSpec.js"
import { makeScriptedExecutor } from "./internal/scriptedExecutor.js"
import type { RecordedBashCall, ScriptedProcess } from "./internal/scriptedExecutor.js"

export type { RecordedBashCall, ScriptedProcess } from "./internal/scriptedExecutor.js"

/**
 * A scripted answer to one foreground call: a fixed result, or a function of the spec.
 *
 * @since 0.1.0
 * @category models
 */
export type ScriptedRun = BashExecutor.RunResult | ((spec: BashExecutor.Spec) => Effect.Effect<BashExecutor.RunResult, BashExecutor.RunError>)

/**
 * Settings of {@link layer}.
 *
 * @since 0.1.0
 * @category models
 */
export interface ScriptedBashExecutorConfig {
  /** The advertised sandbox mode; absent (the default) for an unconfined executor. */
  readonly sandboxMode?: BashExecutor.SandboxMode
  /** Default workdir. Default `process.cwd()` at resolve time. */
  readonly cwd?: string
  /** Default: the local executor's (`LocalBashExecutor.defaults.timeoutMs`). */
  readonly timeoutMs?: number
  /** Default: the local executor's (`LocalBashExecutor.defaults.maxTimeoutMs`). */
  readonly maxTimeoutMs?: number
  /** Default: the local executor's (`LocalBashExecutor.defaults.maxOutputBytes`). */
  readonly maxOutputBytes?: number
  /** Answers for successive foreground calls; once used up, every call gets {@link echoResult}. */
  readonly runs?: ReadonlyArray<ScriptedRun>
}

/**
 * The control surface of the double, for tests.
 *
 * @since 0.1.0
 * @category tags
 */
export class ScriptedBashExecutor extends Context.Tag("effect-bash/ScriptedBashExecutor")<
  ScriptedBashExecutor,
  {
    /** Every run/start call so far, oldest first. */
    readonly calls: Effect.Effect<ReadonlyArray<RecordedBashCall>>
    /** Queues more scripted foreground answers. */
    readonly script: (...runs: ReadonlyArray<ScriptedRun>) => Effect.Effect<void>
    /** Every background process started so far, oldest first. */
    readonly processes: Effect.Effect<ReadonlyArray<ScriptedProcess>>
  }
>() {}

/**
 * A successful foreground result; `overrides` replace any field.
 *
 * @since 0.1.0
 * @category utils
 */
export const bashRunResult = (overrides: Partial<BashExecutor.RunResult> = {}): BashExecutor.RunResult => ({
  exitCode: 0,
  signal: null,
  timedOut: false,
  aborted: false,
  timeoutMs: LocalBashExecutor.defaults.timeoutMs,
  stdout: { text: "", truncated: false },
  stderr: { text: "", truncated: false },
  ...overrides
})

/**
 * The default answer: exit 0 with the command itself echoed on stdout.
 *
 * @since 0.1.0
 * @category utils
 */
export const echoResult = (spec: BashExecutor.Spec): BashExecutor.RunResult =>
  bashRunResult({ timeoutMs: spec.timeoutMs, stdout: { text: `${spec.command}\n`, truncated: false } })

/** Completes once `signal` has fired. */
const whenAborted = (signal: AbortSignal): Effect.Effect<void> =>
  Effect.async((resume) => {
    const fired = () => resume(Effect.void)
    if (signal.aborted) return fired()
    signal.addEventListener("abort", fired, { once: true })
    return Effect.sync(() => signal.removeEventListener("abort", fired))
  })

/**
 * A scripted answer that waits until the spec's abort trigger fires, then reports an aborted run
 * ended by SIGTERM. A call without a trigger never settles (interrupt it).
 *
 * @since 0.1.0
 * @category utils
 */
export const untilAborted: ScriptedRun = (spec) =>
  (spec.signal === undefined ? Effect.never : whenAborted(spec.signal)).pipe(
    Effect.as(bashRunResult({ aborted: true, signal: "SIGTERM", exitCode: null, timeoutMs: spec.timeoutMs }))
  )

const make = (config: ScriptedBashExecutorConfig) =>
  Effect.gen(function*() {
    const queue = yield* Ref.make<ReadonlyArray<ScriptedRun>>(config.runs ?? [])
    // The local executor's defaults, so a script resolves a request as the real executor would.
    const defaults: ResolveDefaults = {
      cwd: config.cwd,
      timeoutMs: config.timeoutMs ?? LocalBashExecutor.defaults.timeoutMs,
      maxTimeoutMs: config.maxTimeoutMs ?? LocalBashExecutor.defaults.maxTimeoutMs,
      maxOutputBytes: config.maxOutputBytes ?? LocalBashExecutor.defaults.maxOutputBytes
    }

    const nextRun = Ref.modify(queue, (current): [Option.Option<ScriptedRun>, ReadonlyArray<ScriptedRun>] =>
      current.length === 0 ? [Option.none(), current] : [Option.fromNullable(current[0]), current.slice(1)]
    )

    const double = yield* makeScriptedExecutor({
      sandboxMode: config.sandboxMode,
      defaultWorkdir: Effect.sync(() => config.cwd ?? process.cwd()),
      resolve: (request) => resolveSpec(defaults, request),
      answer: (spec) =>
        Effect.gen(function*() {
          const scripted = yield* nextRun
          if (Option.isNone(scripted)) return echoResult(spec)
          return typeof scripted.value === "function" ? yield* scripted.value(spec) : scripted.value
        })
    })

    return Context.make(BashExecutor, double.executor).pipe(
      Context.add(ScriptedBashExecutor, {
        calls: double.calls,
        script: (...runs) => Ref.update(queue, (current) => [...current, ...runs]),
        processes: double.processes
      })
    )
  })

/**
 * Provides {@link BashExecutor} (the double) and {@link ScriptedBashExecutor} (its controls).
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (
  config: ScriptedBashExecutorConfig = {}
): Layer.Layer<BashExecutor | ScriptedBashExecutor> => Layer.effectContext(make(config))
