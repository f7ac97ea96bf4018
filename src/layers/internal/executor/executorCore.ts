/**
 * The process mechanics every executor shares: specs checked and spawned through the
 * `ProcessSpawner` in their own group, supervised on the Clock, one TERM→KILL kill path, bounded
 * output with spill files owned by the layer's scope, background processes, and disposal that kills
 * everything and waits for it.
 *
 * @internal
 */
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as FiberSet from "effect/FiberSet"
import * as Scope from "effect/Scope"
import { BackgroundLimitError, BashRequestError, BashExecutor, SandboxUnavailableError } from "../../../services/BashExecutor.js"
import type { SpawnError } from "../../../services/ProcessSpawner.js"
import { ProcessSpawner } from "../../../services/ProcessSpawner.js"
import type { BackgroundEntry } from "./background.js"
import { BackgroundRegistry } from "../BackgroundRegistry.js"
import { settledState, toHandle } from "./background.js"
import type { LocalBashExecutorConfig } from "../../executorSettings.js"
import { makeEnvBuilder } from "./environment.js"
import { killGroup } from "./killGroup.js"
import { LiveFeed } from "./LiveFeed.js"
import { refuseIfAborted, resolveSpec } from "../../resolveSpec.js"
import type { RunnerDialect } from "./RunnerWatch.js"
import { RunnerWatch } from "./RunnerWatch.js"
import { makeSpillStore } from "./SpillStore.js"
import { StreamCollector } from "./StreamCollector.js"
import { supervise } from "./supervise.js"
import { unproxiedMessage } from "../network/callEntries.js"
import { fnWhenTraced, whenTraced } from "../../../services/internal/whenTraced.js"

const encoder = new TextEncoder()

/**
 * How one call is launched: the runner its shell is started through, and the sandbox it reports.
 */
export interface Launch {
  readonly wrapper?: ProcessSpawner.Wrapper
  /**
   * The call's own network proxies, started in the call's scope before the spawn; what they
   * refused goes into the sandbox facts.
   */
  readonly network?: Effect.Effect<NetworkCall, SandboxUnavailableError | SpawnError, Scope.Scope>
  /** Present for a confining executor, even when this call runs unconfined. */
  readonly sandbox?: {
    readonly mode: BashExecutor.SandboxMode
    readonly enforcement?: "full" | "partial"
    /** How the runner reports denials and its own failures; absent when no runner is used. */
    readonly dialect?: RunnerDialect
  }
}

/** A call's network proxies: the refusal lines so far. */
export interface NetworkCall {
  readonly refusals: () => ReadonlyArray<string>
}

/** `facts` with the call's network refusals, when there are any. */
const withRefusals = (facts: BashExecutor.SandboxFacts, network: NetworkCall | undefined): BashExecutor.SandboxFacts => {
  const refusals = network?.refusals() ?? []
  return refusals.length === 0 ? facts : { ...facts, networkRefusals: refusals }
}

/** A container's refusals (a launch without a sandbox), when there are any: a sandbox's go into its facts. */
const refusalsOf = (launch: Launch, network: NetworkCall | undefined): { readonly networkRefusals?: ReadonlyArray<string> } => {
  const refusals = launch.sandbox === undefined ? network?.refusals() ?? [] : []
  return refusals.length === 0 ? {} : { networkRefusals: refusals }
}

/**
 * What makes one executor differ from another: only how a spec is launched.
 */
export interface Confinement {
  /** Reported as the executor's `sandboxMode`. */
  readonly sandboxMode: BashExecutor.SandboxMode | undefined
  /** Reported as the executor's `workspaceRoot`. */
  readonly workspaceRoot?: string | undefined
  /** Reported as the executor's `container`. */
  readonly container?: BashExecutor.ContainerFacts | undefined
  /** Reported as the executor's `network`. */
  readonly network?: BashExecutor.NetworkFacts | undefined
  /** Fails closed when the call's mode cannot be enforced here, or its writable root cannot be granted. */
  readonly launch: (spec: BashExecutor.Spec) => Effect.Effect<Launch, SandboxUnavailableError | BashRequestError>
  /** Set-up work started with the layer (the executor's `ready`). */
  readonly ready?: Effect.Effect<void>
  /**
   * The environment a command inherits before the scrub: the host's when absent. A container's
   * commands inherit none of the host's (the box has its own).
   */
  readonly inheritedEnv?: Readonly<Record<string, string | undefined>>
}

/**
 * The plain local launch: `bash -c` with no runner and no sandbox.
 */
export const unconfined: Confinement = { sandboxMode: undefined, launch: () => Effect.succeed({}) }

/** The sandbox facts of a settled run, and the runner's failure line if the runner broke. */
const judge = (
  sandbox: NonNullable<Launch["sandbox"]>,
  watch: RunnerWatch | undefined,
  exit: ProcessSpawner.Exit
): { readonly facts: BashExecutor.SandboxFacts; readonly runnerFailure: string | undefined } => {
  const failed = exit.exitCode !== 0
  const runnerFailure = failed ? watch?.runnerFailure : undefined
  const facts: BashExecutor.SandboxFacts = {
    mode: sandbox.mode,
    denied: failed && runnerFailure === undefined && watch?.denied === true,
    ...(sandbox.enforcement === undefined ? {} : { enforcement: sandbox.enforcement }),
    ...(runnerFailure === undefined ? {} : { runnerFailed: true })
  }
  return { facts, runnerFailure }
}

/**
 * The executor over a resolved config and a confinement: everything but the layer wiring.
 */
export const makeExecutorCore = (config: LocalBashExecutorConfig, confinement: Confinement = unconfined) =>
  Effect.gen(function*() {
    const spawner = yield* ProcessSpawner
    const spills = yield* makeSpillStore({
      keep: config.keepSpillFiles,
      maxTotalBytes: config.maxSpillTotalBytes,
      ...(config.spillParent === undefined ? {} : { parent: config.spillParent })
    })
    const buildEnv = makeEnvBuilder({
      allow: config.envAllow,
      deny: config.envDeny.map((pattern) => new RegExp(pattern, "i"))
    })
    const foreground = new Set<ProcessSpawner.Process>()
    const registry = new BackgroundRegistry<BackgroundEntry>({
      maxRunning: config.maxBackground,
      maxFinished: config.maxFinishedBackground,
      isRunning: (entry) => entry.state.status === "running"
    })
    const backgroundFibers = yield* FiberSet.make()
    const escalation = config.escalation ?? Effect.never

    // Disposal: kill every live group (foreground and background) through the kill path, in
    // parallel, and wait for the background lifecycles to settle — each step bounded.
    yield* Effect.addFinalizer(() =>
      Effect.gen(function*() {
        const running = registry.running
        yield* Effect.forEach(running, (entry) => Deferred.succeed(entry.killRequest, undefined), { discard: true })
        yield* Effect.forEach([...foreground], (process) => killGroup(process, config.graceMs, escalation), {
          concurrency: "unbounded",
          discard: true
        })
        yield* Effect.forEach(running, (entry) => Deferred.await(entry.done), { concurrency: "unbounded" }).pipe(
          Effect.interruptible,
          Effect.timeoutOption(config.graceMs * 3)
        )
      })
    )

    // The runner gets the scrubbed env too: inside a PID namespace `/proc/1/environ` is the runner's.
    const spawnOptions = (spec: BashExecutor.Spec, launch: Launch): ProcessSpawner.Options => ({
      command: spec.command,
      cwd: spec.workdir,
      env: buildEnv(confinement.inheritedEnv ?? process.env, spec.env, spec.dshEnv),
      ...(spec.stdin === undefined ? {} : { stdin: spec.stdin }),
      ...(launch.wrapper === undefined ? {} : { wrapper: launch.wrapper }),
      ...(spec.signal === undefined ? {} : { signal: spec.signal })
    })

    // Live output is observed at the collectors, so it sees exactly the bytes they collect.
    const collectors = (spec: BashExecutor.Spec, watch: RunnerWatch | undefined, live: LiveFeed) => {
      const liveStderr = live.observer("stderr")
      const stderrObserver = watch === undefined ? liveStderr : {
        feed: (chunk: Uint8Array) => {
          watch.feed(chunk)
          liveStderr.feed(chunk)
        }
      }
      return {
        stdout: new StreamCollector("stdout", spec.stdoutMaxBytes, config.maxSpillBytes, spills, live.observer("stdout")),
        stderr: new StreamCollector("stderr", config.maxOutputBytes, config.maxSpillBytes, spills, stderrObserver)
      }
    }

    const watchFor = (launch: Launch) =>
      launch.sandbox?.dialect === undefined ? undefined : new RunnerWatch(launch.sandbox.dialect)

    const resolveBody = function*(request: BashExecutor.Request) {
      return yield* resolveSpec(config, request)
    }
    const resolve = fnWhenTraced("BashExecutor.resolve")(resolveBody)

    // A call's own allow entries need proxies to widen: without them they would be ignored.
    const refuseUnproxied = (spec: BashExecutor.Spec) =>
      confinement.network === undefined && (spec.networkAllow?.length ?? 0) > 0
        ? Effect.fail(new BashRequestError({ field: "networkAllow", message: unproxiedMessage("networkAllow") }))
        : Effect.void

    // `live` is the feed runStreaming watches; a plain run's has no consumer.
    // A spec is checked by `resolve` (its brand says so): only the abort trigger can have changed.
    const runBody = function*(spec: BashExecutor.Spec, live: LiveFeed = new LiveFeed()) {
      yield* refuseIfAborted(spec)
      yield* refuseUnproxied(spec)
      const launch = yield* confinement.launch(spec)
      const watch = watchFor(launch)
      // From the spawn to the kill finalizer nothing may interrupt: the command may be running already.
      const [supervised, network] = yield* Effect.scoped(
        Effect.uninterruptibleMask((restore) =>
          Effect.gen(function*() {
            const network = launch.network === undefined ? undefined : yield* launch.network
            // A spawner that gave up because the abort fired meanwhile started nothing: the abort is the answer.
            const process = yield* spawner.spawn(spawnOptions(spec, launch)).pipe(
              Effect.catchTag("SpawnError", (error) => Effect.zipRight(refuseIfAborted(spec), Effect.fail(error)))
            )
            foreground.add(process)
            yield* Scope.addFinalizer(yield* Effect.scope, Effect.sync(() => foreground.delete(process)))
            const supervised = yield* supervise({
              process,
              ...collectors(spec, watch, live),
              graceMs: config.graceMs,
              ...(config.escalation === undefined ? {} : { escalation: config.escalation }),
              timeoutMs: spec.timeoutMs,
              ...(spec.signal === undefined ? {} : { signal: spec.signal }),
              restore
            })
            return [supervised, network] as const
          })
        )
      )
      const sandbox = launch.sandbox === undefined ? undefined : judge(launch.sandbox, watch, supervised.exit)
      if (sandbox?.runnerFailure !== undefined) {
        return yield* new SandboxUnavailableError({ mode: sandbox.facts.mode, runnerFailure: sandbox.runnerFailure })
      }
      const result: BashExecutor.RunResult = {
        exitCode: supervised.exit.exitCode,
        signal: supervised.exit.signal,
        timedOut: supervised.cause === "timeout",
        aborted: supervised.cause === "abort",
        timeoutMs: spec.timeoutMs,
        stdout: supervised.stdout,
        stderr: supervised.stderr,
        ...(sandbox === undefined ? {} : { sandbox: withRefusals(sandbox.facts, network) }),
        ...refusalsOf(launch, network)
      }
      return result
    }
    const run = whenTraced(
      Effect.fn("BashExecutor.run")(
        runBody,
        (effect, spec) => Effect.zipRight(Effect.annotateCurrentSpan("timeoutMs", spec.timeoutMs), effect)
      ),
      Effect.fnUntraced(runBody)
    )

    // The consumer subscribes before the spawn, so it misses nothing; the run is the scope's, and
    // interruptible even when started where interruption is off (an acquire), so closing the scope
    // kills it rather than waiting for the command to end.
    const runStreaming = Effect.fn("BashExecutor.runStreaming")(function*(spec: BashExecutor.Spec) {
      yield* Effect.annotateCurrentSpan("timeoutMs", spec.timeoutMs)
      const live = new LiveFeed()
      const subscription = yield* Effect.acquireRelease(live.subscribe, (subscription) => subscription.close)
      const fiber = yield* Effect.forkScoped(Effect.interruptible(Effect.ensuring(run(spec, live), live.end)))
      return { output: subscription.stream, result: Fiber.join(fiber) }
    })

    const start = Effect.fn("BashExecutor.start")(function*(spec: BashExecutor.Spec) {
      yield* refuseIfAborted(spec)
      if (!registry.hasCapacity) return yield* new BackgroundLimitError({ limit: config.maxBackground })
      yield* refuseUnproxied(spec)
      const launch = yield* confinement.launch(spec)
      const watch = watchFor(launch)
      const live = new LiveFeed()
      const output = collectors(spec, watch, live)
      const entry: BackgroundEntry = {
        id: registry.nextId("proc"),
        owner: spec.owner,
        state: { status: "running", exitCode: null, signal: null },
        killRequest: yield* Deferred.make<void>(),
        done: yield* Deferred.make<BashExecutor.ProcessState>(),
        live,
        ...output
      }
      registry.set(entry)
      const killed: BashExecutor.ProcessState = { status: "killed", exitCode: null, signal: null }
      const settle = (state: BashExecutor.ProcessState) =>
        Effect.suspend(() => {
          entry.state = state
          registry.finish(entry.id)
          return live.end.pipe(Effect.zipRight(Deferred.succeed(entry.done, state)))
        })
      const lifecycle = Effect.scoped(
        Effect.gen(function*() {
          const network = launch.network === undefined ? undefined : yield* launch.network
          const supervised = yield* Effect.uninterruptibleMask((restore) =>
            Effect.flatMap(spawner.spawn(spawnOptions(spec, launch)), (process) =>
              supervise({
                process,
                ...output,
                graceMs: config.graceMs,
                ...(config.escalation === undefined ? {} : { escalation: config.escalation }),
                killRequest: Deferred.await(entry.killRequest),
                ...(spec.signal === undefined ? {} : { signal: spec.signal }),
                restore
              }))
          )
          const state = settledState(supervised)
          if (launch.sandbox === undefined) return { ...state, ...refusalsOf(launch, network) }
          return { ...state, sandbox: withRefusals(judge(launch.sandbox, watch, supervised.exit).facts, network) }
        })
      ).pipe(
        // As for `run`: a spawner that gave up because the abort fired meanwhile started nothing, and
        // the abort is what the task's output says.
        Effect.catchTag("SpawnError", (error) =>
          refuseIfAborted(spec).pipe(
            Effect.match({ onFailure: (aborted) => aborted.message, onSuccess: () => `spawn failed: ${error.message}` }),
            Effect.flatMap((line) => output.stderr.append(encoder.encode(`${line}\n`))),
            Effect.zipRight(Effect.all([output.stdout.finish, output.stderr.finish])),
            Effect.as(killed)
          )),
        Effect.flatMap(settle),
        Effect.onInterrupt(() => settle(killed))
      )
      // Its waits are interruptible whatever the caller's region (a tool starts it uninterruptibly).
      yield* FiberSet.run(backgroundFibers, Effect.interruptible(lifecycle))
      return toHandle(entry)
    })

    return BashExecutor.of({
      sandboxMode: confinement.sandboxMode,
      workspaceRoot: confinement.workspaceRoot,
      ...(confinement.container === undefined ? {} : { container: confinement.container }),
      ...(confinement.network === undefined ? {} : { network: confinement.network }),
      ...(confinement.ready === undefined ? {} : { ready: confinement.ready }),
      defaultWorkdir: Effect.sync(() => config.cwd ?? process.cwd()),
      resolve,
      run: (spec) => run(spec),
      runStreaming,
      start,
      ownerOf: (id) => Effect.sync(() => registry.ownerOf(id))
    })
  })

