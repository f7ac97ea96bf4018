/**
 * The parts of the scripted executor doubles (`ScriptedBashExecutor`, `FakeConfiningExecutor`) share:
 * the recorded calls, the hand-driven background processes, and the executor over them.
 *
 * @internal
 */
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Option from "effect/Option"
import * as Ref from "effect/Ref"
import * as Stream from "effect/Stream"
import type { BashExecutor } from "../../services/BashExecutor.js"
import { refuseIfAborted } from "../../layers/resolveSpec.js"
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

/** Both streams as one text, as the executor's reads merge them. */
const merged = (stdout: string, stderr: string): string =>
  stderr === "" ? stdout : `${stdout}${stdout === "" || stdout.endsWith("\n") ? "" : "\n"}[stderr]\n${stderr}`


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
