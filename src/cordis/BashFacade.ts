/**
 * `ctx.bash`: the reference executor seam (`dsh-bash`), over the {@link BashExecutor} service.
 * Everything but `run` is synchronous, as in the reference: `resolve`, `start` and `ownerOf` are
 * synchronous effects run with `runSync`, and a process handle's status fields, `readOutput()` and
 * `kill()` read and act at once. `start` returns the handle before the spawn completes; a spawn
 * failure settles the handle as `killed` with `spawn failed: <error>` in its stderr.
 *
 * JavaScript callers may build or change a spec by hand, so `run` and `start` check it as `resolve`
 * would (the executor trusts a resolved spec and checks nothing again), failing with the same errors.
 */
import type * as Brand from "effect/Brand"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { checkSpec } from "../layers/resolveSpec.js"
import type { BashExecutor } from "../services/BashExecutor.js"
import type { CallRunner } from "./CallRunner.js"
import { RunnerClosedError } from "./CallRunner.js"

/**
 * A background process handle (the reference's `BashProcess`). The status fields are live: each
 * read reports the current state.
 *
 * @since 0.1.0
 * @category models
 */
export interface CordisBashProcess {
  readonly id: string
  /** The opaque owner token the spec carried. */
  readonly owner: string | undefined
  readonly status: BashExecutor.ProcessStatus
  readonly exitCode: number | null
  readonly signal: string | null
  readonly sandbox: BashExecutor.SandboxFacts | undefined
  /** Resolves once the process has closed (the status fields then hold the final state); never rejects. */
  readonly done: Promise<void>
  /** Consuming read of new output: never re-delivers a byte. */
  readOutput(): BashExecutor.OutputRead
  /** Kills the group (TERM → KILL); `false` once the process has finished. Idempotent. */
  kill(): boolean
}

/**
 * A spec as `ctx.bash` takes it: one from `resolve`, or one a caller built or changed by hand.
 *
 * @since 0.1.0
 * @category models
 */
export type CordisBashSpec = Omit<BashExecutor.Spec, Brand.BrandTypeId>

/**
 * The `ctx.bash` service. Synchronous methods throw, and `run` rejects with, the executor's typed
 * errors, whose `message` is the contract text (`aborted before spawn: <reason>`, an error naming
 * the bad field, …); a call made after the plugin unloaded (or a `run` cut short by the unload)
 * fails with `RunnerClosedError`.
 *
 * @since 0.1.0
 * @category models
 */
export interface CordisBash {
  /** `undefined` for an unconfined executor. */
  readonly sandboxMode: BashExecutor.SandboxMode | undefined
  /** Fills the defaults (`workdir`, `timeoutMs` capped at `maxTimeoutMs`, `stdoutMaxBytes`). */
  resolve(request: BashExecutor.Request): BashExecutor.Spec
  /** Runs in the foreground; aborting `spec.signal` kills the group and resolves with `aborted: true`. */
  run(spec: CordisBashSpec): Promise<BashExecutor.RunResult>
  /** Starts in the background and returns the handle at once; no timeout applies. */
  start(spec: CordisBashSpec): CordisBashProcess
  /** The owner token a tracked background process was started for. */
  ownerOf(id: string): string | undefined
}

const processHandle = (process: BashExecutor.Process, runner: CallRunner<never>): CordisBashProcess => {
  // Reads keep working after the plugin unloaded: the final state and output stay in memory.
  const current = (): BashExecutor.ProcessState => runner.readSync(process.state)
  return {
    id: process.id,
    owner: process.owner,
    get status() {
      return current().status
    },
    get exitCode() {
      return current().exitCode
    },
    get signal() {
      return current().signal
    },
    get sandbox() {
      return current().sandbox
    },
    // Interrupted only after the runtime is disposed, when the process has settled.
    done: runner.watch(process.done).then(() => undefined, () => undefined),
    readOutput: () => runner.readSync(process.readOutput),
    kill: () => {
      try {
        return runner.runSync(process.kill)
      } catch (error) {
        // Unloading kills every process: none is left for this call to kill.
        if (error instanceof RunnerClosedError) return false
        throw error
      }
    }
  }
}

/**
 * The `ctx.bash` facade over one executor instance.
 */
export const makeBashFacade = (executor: BashExecutor["Type"], runner: CallRunner<never>): CordisBash => ({
  sandboxMode: executor.sandboxMode,
  resolve: (request) => runner.runSync(executor.resolve(request)),
  run: (spec) => runner.run(Effect.flatMap(checkSpec(spec), executor.run)),
  start: (spec) => processHandle(runner.runSync(Effect.flatMap(checkSpec(spec), executor.start)), runner),
  ownerOf: (id) => Option.getOrUndefined(runner.runSync(executor.ownerOf(id)))
})
