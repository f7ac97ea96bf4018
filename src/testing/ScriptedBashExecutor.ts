/**
 * A {@link BashExecutor} test double that runs nothing: it records every resolved spec it is asked to
 * run or start, answers foreground calls from a script, and hands out background processes that a
 * test drives by hand (emit output, finish, drop output).
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Ref from "effect/Ref"
import * as Stream from "effect/Stream"
import { BashExecutor } from "../services/BashExecutor.js"
import { LocalBashExecutor } from "../index.js"
import type { ResolveDefaults } from "../layers/resolveSpec.js"
import { refuseIfAborted, resolveSpec } from "../layers/resolveSpec.js"

/**
 * One call the double was asked to make, with the spec exactly as it received it.
 *
 * @since 0.1.0
 * @category models
 */
export interface RecordedBashCall {
  readonly op: "run" | "start"
  readonly spec: BashExecutor.Spec
}

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
 * A background process started through the double, driven by the test.
 *
 * @since 0.1.0
 * @category models
 */
export interface ScriptedProcess {
  readonly id: string
  readonly spec: BashExecutor.Spec
  /** The handle the caller received. */
  readonly process: BashExecutor.Process
  /** Appends output that the next `readOutput` delivers. */
  readonly emit: (stdout: string, stderr?: string) => Effect.Effect<void>
  /** Marks output as dropped from memory: the next read is lossy and reports these spill paths. */
  readonly drop: (spill?: { readonly stdoutSpillPath?: string; readonly stderrSpillPath?: string }) => Effect.Effect<void>
  /** Ends the process as if it had exited; ignored once it has finished. */
  readonly finish: (end: {
    readonly exitCode: number | null
    readonly signal?: string | null
    readonly status?: "completed" | "killed"
    readonly sandbox?: BashExecutor.SandboxFacts
  }) => Effect.Effect<void>
  /** How many times `kill` was called on the handle. */
  readonly killCalls: Effect.Effect<number>
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

/** Both streams as one text, as the executor's reads merge them. */
const merged = (stdout: string, stderr: string): string =>
  stderr === "" ? stdout : `${stdout}${stdout === "" || stdout.endsWith("\n") ? "" : "\n"}[stderr]\n${stderr}`

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

interface ProcessBuffers {
  readonly state: BashExecutor.ProcessState
  readonly stdout: string
  readonly stderr: string
  readonly lossy: boolean
  readonly stdoutSpillPath?: string
  readonly stderrSpillPath?: string
  readonly kills: number
}

const encoder = new TextEncoder()

/**
 * `runStreaming` for a double whose runs produce no live output: the run starts in the scope, and its
 * output stream carries the result's stdout and stderr once it has settled.
 *
 * @since 0.1.0
 * @category utils
 */
export const streamingFromRun = (run: BashExecutor["Type"]["run"]) => (spec: BashExecutor.Spec) =>
  Effect.map(Effect.forkScoped(Effect.interruptible(run(spec))), (fiber): BashExecutor.LiveRun => ({
    output: Stream.fromEffect(Effect.option(Fiber.join(fiber))).pipe(
      Stream.flatMap(Option.match({
        onNone: () => Stream.empty,
        onSome: (result) =>
          Stream.fromIterable<BashExecutor.LiveOutput>([
            { _tag: "OutputChunk", stream: "stdout", bytes: encoder.encode(result.stdout.text) },
            { _tag: "OutputChunk", stream: "stderr", bytes: encoder.encode(result.stderr.text) }
          ]).pipe(Stream.filter((chunk) => chunk._tag === "OutputChunk" && chunk.bytes.length > 0))
      }))
    ),
    result: Fiber.join(fiber)
  }))

/**
 * A hand-driven background process: running until `finish` or `kill` (which settles it as killed by
 * SIGTERM at once).
 *
 * @since 0.1.0
 * @category constructors
 */
export const makeScriptedProcess = (id: string, spec: BashExecutor.Spec): Effect.Effect<ScriptedProcess> =>
  Effect.gen(function*() {
    const buffers = yield* Ref.make<ProcessBuffers>({
      state: { status: "running", exitCode: null, signal: null },
      stdout: "",
      stderr: "",
      lossy: false,
      kills: 0
    })
    const done = yield* Deferred.make<BashExecutor.ProcessState>()

    const settle = (state: BashExecutor.ProcessState) =>
      Ref.modify(buffers, (current): [boolean, ProcessBuffers] =>
        current.state.status === "running" ? [true, { ...current, state }] : [false, current]
      ).pipe(Effect.tap((changed) => (changed ? Deferred.succeed(done, state) : Effect.void)))

    const readOutput = Ref.modify(buffers, (current): [BashExecutor.OutputRead, ProcessBuffers] => [
      {
        delta: merged(current.stdout, current.stderr),
        lossy: current.lossy,
        ...(current.lossy && current.stdoutSpillPath !== undefined ? { stdoutSpillPath: current.stdoutSpillPath } : {}),
        ...(current.lossy && current.stderrSpillPath !== undefined ? { stderrSpillPath: current.stderrSpillPath } : {})
      },
      { ...current, stdout: "", stderr: "", lossy: false }
    ])

    const kill = Ref.update(buffers, (current) => ({ ...current, kills: current.kills + 1 })).pipe(
      Effect.zipRight(settle({ status: "killed", exitCode: null, signal: "SIGTERM" }))
    )

    const handle: BashExecutor.Process = {
      id,
      owner: spec.owner,
      state: Effect.map(Ref.get(buffers), (current) => current.state),
      done: Deferred.await(done),
      readOutput,
      // Hand-driven output is only read, never streamed.
      output: Stream.empty,
      kill
    }

    return {
      id,
      spec,
      process: handle,
      emit: (stdout, stderr = "") =>
        Ref.update(buffers, (current) => ({
          ...current,
          stdout: current.stdout + stdout,
          stderr: current.stderr + stderr
        })),
      drop: (spill = {}) => Ref.update(buffers, (current) => ({ ...current, lossy: true, ...spill })),
      finish: (end) =>
        Effect.asVoid(settle({
          status: end.status ?? "completed",
          exitCode: end.exitCode,
          signal: end.signal ?? null,
          ...(end.sandbox !== undefined ? { sandbox: end.sandbox } : {})
        })),
      killCalls: Effect.map(Ref.get(buffers), (current) => current.kills)
    }
  })

/**
 * A double's executor from its parts. Every `run` and `start` is recorded (`calls`) and refused
 * when already aborted before `answer` answers the run or `start` makes the next hand-driven process
 * (`proc-1`, `proc-2`, …, listed in `processes`), which `started` may drive at once.
 *
 * @since 0.1.0
 * @category constructors
 */
export const makeScriptedExecutor = (parts: {
  readonly sandboxMode: BashExecutor.SandboxMode | undefined
  readonly defaultWorkdir: BashExecutor["Type"]["defaultWorkdir"]
  readonly resolve: BashExecutor["Type"]["resolve"]
  readonly answer: BashExecutor["Type"]["run"]
  readonly started?: (scripted: ScriptedProcess) => Effect.Effect<void>
}) =>
  Effect.gen(function*() {
    const calls = yield* Ref.make<ReadonlyArray<RecordedBashCall>>([])
    const processes = yield* Ref.make<ReadonlyArray<ScriptedProcess>>([])
    const begin = (op: RecordedBashCall["op"], spec: BashExecutor.Spec) =>
      Ref.update(calls, (current) => [...current, { op, spec }]).pipe(Effect.zipRight(refuseIfAborted(spec)))
    const run: BashExecutor["Type"]["run"] = (spec) => Effect.zipRight(begin("run", spec), parts.answer(spec))
    const executor: BashExecutor["Type"] = {
      sandboxMode: parts.sandboxMode,
      defaultWorkdir: parts.defaultWorkdir,
      resolve: parts.resolve,
      run,
      runStreaming: streamingFromRun(run),
      start: (spec) =>
        Effect.gen(function*() {
          yield* begin("start", spec)
          const count = (yield* Ref.get(processes)).length
          const scripted = yield* makeScriptedProcess(`proc-${count + 1}`, spec)
          yield* Ref.update(processes, (current) => [...current, scripted])
          if (parts.started !== undefined) yield* parts.started(scripted)
          return scripted.process
        }),
      ownerOf: (id) =>
        Effect.map(Ref.get(processes), (current) =>
          Option.fromNullable(current.find((scripted) => scripted.id === id)?.spec.owner))
    }
    return { executor, calls: Ref.get(calls), processes: Ref.get(processes) }
  })

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
