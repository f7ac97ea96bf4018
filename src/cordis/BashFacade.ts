/**
 * `ctx.bash`: the reference executor seam with Promise methods, over the {@link BashExecutor} service.
 *
 * @since 0.1.0
 */
import { Option } from "effect"
import type {
  BashExecRequest,
  BashExecSpec,
  BashExecutor,
  BashOutputRead,
  BashProcess,
  BashProcessState,
  BashProcessStatus,
  BashRunResult,
  SandboxFacts,
  SandboxMode
} from "../services/BashExecutor.js"
import type { CallRunner } from "./CallRunner.js"

/**
 * A background process handle. The status fields are live: each read reports the current state.
 *
 * @since 0.1.0
 */
export interface CordisBashProcess {
  readonly id: string
  readonly owner: string | undefined
  readonly status: BashProcessStatus
  readonly exitCode: number | null
  readonly signal: string | null
  readonly sandbox: SandboxFacts | undefined
  /** Settles once the process has closed; never rejects. */
  readonly done: Promise<BashProcessState>
  /** Consuming read of new output. */
  readOutput(): Promise<BashOutputRead>
  /** Kills the group (TERM → KILL); `false` once the process has finished. */
  kill(): Promise<boolean>
}

/**
 * The `ctx.bash` service. Failures reject with the executor's typed errors, whose `message` is the
 * contract text (`aborted before spawn: <reason>`, an error naming the bad field, …); a call cut
 * short by the plugin's unload rejects with `RunnerClosedError`.
 *
 * @since 0.1.0
 */
export interface CordisBash {
  /** `undefined` for an unconfined executor. */
  readonly sandboxMode: SandboxMode | undefined
  resolve(request: BashExecRequest): Promise<BashExecSpec>
  /** Runs in the foreground; aborting `spec.signal` kills the group and resolves with `aborted: true`. */
  run(spec: BashExecSpec): Promise<BashRunResult>
  /** Starts in the background; no timeout applies. */
  start(spec: BashExecSpec): Promise<CordisBashProcess>
  /** The owner token a tracked background process was started for. */
  ownerOf(id: string): Promise<string | undefined>
}

const processHandle = (process: BashProcess, runner: CallRunner<never>): CordisBashProcess => {
  let last: BashProcessState = { status: "running", exitCode: null, signal: null }
  const current = (): BashProcessState => {
    try {
      last = runner.runSync(process.state)
    } catch {
      // The runtime is gone (plugin unloaded): the last state seen stands.
    }
    return last
  }
  const done = runner.watch(process.done).then(
    (state) => (last = state),
    () => current()
  )
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
    done,
    readOutput: () => runner.run(process.readOutput),
    kill: () => runner.run(process.kill)
  }
}

/**
 * The `ctx.bash` facade over one executor instance.
 *
 * @since 0.1.0
 */
export const makeBashFacade = (executor: BashExecutor["Type"], runner: CallRunner<never>): CordisBash => ({
  sandboxMode: executor.sandboxMode,
  resolve: (request) => runner.run(executor.resolve(request)),
  run: (spec) => runner.run(executor.run(spec)),
  start: (spec) => runner.run(executor.start(spec)).then((process) => processHandle(process, runner)),
  ownerOf: (id) => runner.run(executor.ownerOf(id)).then(Option.getOrUndefined)
})
