/**
 * The executor seam: resolve a request against defaults, run a command in the
 * foreground, or start one in the background.
 */
import type * as Brand from "effect/Brand"
import type * as Option from "effect/Option"
import type * as Scope from "effect/Scope"
import type * as Stream from "effect/Stream"
import * as Context from "effect/Context"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import type { SpawnError } from "./ProcessSpawner.js"

/**
 * How many bytes of live output wait for one consumer at most; past it, new chunks are dropped and
 * counted in an {@link BashExecutor.OutputDropped} mark that precedes the next chunk delivered (or ends the stream).
 *
 * @since 0.1.0
 * @category constants
 */
export const liveOutputBufferBytes = 1024 * 1024

/**
 * A request that cannot be resolved or run as given; `field` names the culprit.
 *
 * @since 0.1.0
 * @category errors
 */
export class BashRequestError extends Data.TaggedError("BashRequestError")<{
  readonly field: string
  readonly message: string
}> {}

/**
 * The abort trigger had already fired before anything was spawned.
 *
 * @since 0.1.0
 * @category errors
 */
export class AbortedBeforeSpawnError extends Data.TaggedError("AbortedBeforeSpawnError")<{
  readonly reason: string
}> {
  override get message(): string {
    return `aborted before spawn: ${this.reason}`
  }
}

/**
 * Too many background processes are running.
 *
 * @since 0.1.0
 * @category errors
 */
export class BackgroundLimitError extends Data.TaggedError("BackgroundLimitError")<{
  readonly limit: number
}> {
  override get message(): string {
    return `too many background processes running (limit ${this.limit}); kill one or wait for one to finish`
  }
}

/**
 * The sandbox modes, narrowest first: the one list every setting, parameter and value that names a
 * mode is checked against ({@link BashExecutor.SandboxMode} is its type).
 *
 * @since 0.1.0
 * @category schemas
 */
export const SandboxMode = Schema.Literal("read-only", "workspace-write", "danger-full-access")

/**
 * The exact refusal of a confined mode when no sandbox runner is usable.
 *
 * @since 0.1.0
 * @category utils
 */
export const sandboxUnavailableText = (mode: BashExecutor.SandboxMode): string =>
  `sandbox mode "${mode}" is requested but no sandbox backend is usable on this host; refusing to run the command unconfined. Install bubblewrap or run a Landlock-enforcing kernel (Linux), ensure sandbox-exec is usable (macOS), or ensure the ACL restricted-token runner can start (Windows) — otherwise switch the consumer to danger-full-access.`

/**
 * The sandbox could not confine the command, so it did not run: no usable runner (fail closed), or
 * the runner itself failed (`runnerFailure`, its stderr line).
 *
 * @since 0.1.0
 * @category errors
 */
export class SandboxUnavailableError extends Data.TaggedError("SandboxUnavailableError")<{
  readonly mode: BashExecutor.SandboxMode
  readonly runnerFailure?: string
}> {
  /** The reference's error code. */
  readonly code = "SANDBOX_UNAVAILABLE"
  override get message(): string {
    const text = sandboxUnavailableText(this.mode)
    return this.runnerFailure === undefined ? text : `${text} Runner failure: ${this.runnerFailure}`
  }
}

/**
 * The executor seam.
 *
 * @since 0.1.0
 * @category tags
 */
export class BashExecutor extends Context.Tag("effect-bash/BashExecutor")<
  BashExecutor,
  {
    /** `undefined` for an unconfined executor; the default mode for a confining one. */
    readonly sandboxMode: BashExecutor.SandboxMode | undefined
    /**
     * A confining executor's configured writable root (canonical): the root of calls without a
     * session. `undefined` for an unconfined executor, or one whose root is its default workdir.
     */
    readonly workspaceRoot?: string | undefined
    /**
     * Where commands run when not on this host: the container executor's image, network and shared
     * directory, so the tools can tell the model. Absent for an executor whose commands run on the host.
     */
    readonly container?: BashExecutor.ContainerFacts | undefined
    /**
     * A sandbox's allow-listed network: the names its confined commands may reach, so the tools can
     * tell the model. Absent when the network is the host's or none.
     */
    readonly network?: BashExecutor.NetworkFacts | undefined
    /**
     * The workdir a request without one runs in (the configured `cwd`, else the process's working
     * directory at the time): what `resolve` fills in, without resolving a request.
     */
    readonly defaultWorkdir: Effect.Effect<string>
    /** Fills defaults and validates; fails naming the offending field. */
    readonly resolve: (request: BashExecutor.Request) => Effect.Effect<BashExecutor.Spec, BashRequestError>
    /** Runs in the foreground. Interrupting it kills the group through the timeout path. */
    readonly run: (spec: BashExecutor.Spec) => Effect.Effect<BashExecutor.RunResult, BashExecutor.RunError>
    /**
     * `run`, started at once in the scope, with its output observable while it runs. Closing the
     * scope before the result interrupts the run (which kills the group).
     */
    readonly runStreaming: (spec: BashExecutor.Spec) => Effect.Effect<BashExecutor.LiveRun, never, Scope.Scope>
    /** Starts in the background and returns at once (once {@link ready} has completed). */
    readonly start: (spec: BashExecutor.Spec) => Effect.Effect<BashExecutor.Process, BashExecutor.StartError>
    /**
     * Completes when the executor answers without waiting on set-up work it started when it was
     * built (the sandbox runner's usability probe). Never fails; absent when there is none. (A probe
     * that met bubblewrap's mount race is started again by the next confined call, which waits for it.)
     */
    readonly ready?: Effect.Effect<void>
    /** The owner token a tracked background process was started for. */
    readonly ownerOf: (id: string) => Effect.Effect<Option.Option<string>>
  }
>() {}

/**
 * The types of the {@link BashExecutor} service.
 *
 * @since 0.1.0
 * @category models
 */
export declare namespace BashExecutor {
  /**
   * A sandbox mode, as {@link SandboxMode} lists them.
   *
   * @since 0.1.0
   * @category models
   */
  export type SandboxMode = typeof SandboxMode.Type

  /**
   * The confinement a confining executor applies to one call.
   *
   * @since 0.1.0
   * @category models
   */
  export interface SandboxPolicy {
    readonly mode: SandboxMode
    /**
     * The workspace root, absolute: writable under `workspace-write`. The sandbox resolves its
     * links, and refuses (a `BashRequestError` on `workspaceRoot`) a root that would nest with one
     * it granted another call, or that is reached through a link inside one.
     */
    readonly workspaceRoot: string
    /**
     * Entries this call may reach besides the sandbox's allow-list (`example.com`, `*.example.com`,
     * an IP literal, each with an optional `:port`); its deny-list still comes first. Only for a
     * sandbox with an allow-listed network: otherwise, or with a bad entry, the call fails (a
     * `BashRequestError` on `sandboxPolicy.networkAllow`, naming the entry). A confined call only.
     */
    readonly networkAllow?: ReadonlyArray<string>
  }

  /**
   * Where a container executor runs commands, as the model is told.
   *
   * @since 0.2.0
   * @category models
   */
  export interface ContainerFacts {
    /** The image each container starts from: its programs are the only ones a command finds. */
    readonly image: string
    /**
     * `none`: a loopback interface only; `bridge`: the engine's default network; `allow-list`: a
     * loopback interface, and proxies that admit the names of the executor's `network` facts.
     */
    readonly network: "none" | "bridge" | "allow-list"
    /** The directory of the session's files in the container: with `bind`, a host directory at the same path. */
    readonly workspace: string
    /**
     * `bind` (when absent): the workspace is the user's directory, shared at the same path; `volume`: an
     * engine volume of the session's container, not on the user's machine.
     */
    readonly workspaceKind?: "bind" | "volume" | undefined
  }

  /**
   * The allow-list of a sandbox whose commands reach the network only through its proxies.
   *
   * @since 0.2.0
   * @category models
   */
  export interface NetworkFacts {
    /** The allowed entries, as configured (`example.com`, `*.example.com`, `10.0.0.5:443`). */
    readonly allow: ReadonlyArray<string>
    /** The entries refused even when allowed. */
    readonly deny: ReadonlyArray<string>
  }

  /**
   * What a confining executor reports about one call.
   *
   * @since 0.1.0
   * @category models
   */
  export interface SandboxFacts {
    readonly mode: SandboxMode
    /** A file access was denied by the sandbox. */
    readonly denied: boolean
    readonly enforcement?: string
    readonly runnerFailed?: boolean
    /**
     * Connections the sandbox's network proxies refused, one line each as the model reads it:
     * `[network: refused example.com:443 — not in the allow-list]`.
     */
    readonly networkRefusals?: ReadonlyArray<string>
  }

  /**
   * A caller's request; every field but `command` falls back to the executor's config.
   *
   * `stdin`, `env`, `dshEnv` and `stdoutMaxBytes` are trusted-caller fields: the model-facing tool never
   * forwards them from model input.
   *
   * @since 0.1.0
   * @category models
   */
  export interface Request {
    readonly command: string
    readonly workdir?: string
    readonly timeoutMs?: number
    readonly stdoutMaxBytes?: number
    readonly stdin?: string
    /** Ordinary variables; may not set `DSH_*` names. */
    readonly env?: Readonly<Record<string, string>>
    /** Managed variables; only `DSH_*` names. Merged last. */
    readonly dshEnv?: Readonly<Record<string, string>>
    /**
     * Entries this call may reach besides the executor's network allow-list (its deny-list still
     * comes first): `example.com`, `*.example.com`, an IP literal, each with an optional `:port`.
     * Only for an executor with an allow-listed network (`network` set); otherwise, or with a bad
     * entry, the call fails (a `BashRequestError` on `networkAllow`, naming the entry). A sandbox
     * also takes them as `sandboxPolicy.networkAllow`.
     *
     * @since 0.2.0
     */
    readonly networkAllow?: ReadonlyArray<string>
    /** A cooperative abort trigger: aborting it kills the group and yields `aborted: true`. */
    readonly signal?: AbortSignal
    readonly sandboxPolicy?: SandboxPolicy
    /** An opaque owner token stored with a background process (see `ownerOf`). */
    readonly owner?: string
  }

  /**
   * A request with every default filled in and every field checked. It is branded: only an
   * executor's `resolve` (the executors and the test doubles share one implementation) produces one, so
   * `run`, `runStreaming` and `start` take it as checked and never validate it again. A spec built
   * or changed by hand is not a `Spec`; edges that take one from untyped callers (the Cordis
   * `ctx.bash`) check it first.
   *
   * @since 0.1.0
   * @category models
   */
  export interface Spec extends Request, Brand.Brand<"effect-bash/BashExecutor.Spec"> {
    readonly workdir: string
    readonly timeoutMs: number
    readonly stdoutMaxBytes: number
  }

  /**
   * One stream's output: the tail that fits the budget, and where the whole stream went.
   *
   * @since 0.1.0
   * @category models
   */
  export interface CollectedOutput {
    /** The whole stream, or its tail when `truncated`. */
    readonly text: string
    readonly truncated: boolean
    /** A complete, closed spill file with the raw bytes of the whole stream, when one exists. */
    readonly spillPath?: string
  }

  /**
   * The outcome of a foreground call. A non-zero exit, a signal death or a timeout are results.
   *
   * @since 0.1.0
   * @category models
   */
  export interface RunResult {
    readonly exitCode: number | null
    readonly signal: string | null
    /** The timeout fired first (exclusive with `aborted`). */
    readonly timedOut: boolean
    /** The abort trigger fired first (exclusive with `timedOut`). */
    readonly aborted: boolean
    readonly timeoutMs: number
    readonly stdout: CollectedOutput
    readonly stderr: CollectedOutput
    readonly sandbox?: SandboxFacts
    /**
     * Connections a container's network proxies refused while the call ran, one line each as the
     * model reads them (a sandbox's are in `sandbox`).
     */
    readonly networkRefusals?: ReadonlyArray<string>
  }

  /**
   * Raw bytes one stream produced, as they were read.
   *
   * @since 0.1.0
   * @category models
   */
  export interface OutputChunk {
    readonly _tag: "OutputChunk"
    readonly stream: "stdout" | "stderr"
    readonly bytes: Uint8Array
  }

  /**
   * The lossy mark of live output: a consumer fell behind and this many bytes of each stream were not
   * shown to it. They are still in the run's result (within its budget) and in its spill files.
   *
   * @since 0.1.0
   * @category models
   */
  export interface OutputDropped {
    readonly _tag: "OutputDropped"
    readonly stdoutBytes: number
    readonly stderrBytes: number
  }

  /**
   * One element of live output: a chunk, or the mark of chunks dropped for a slow consumer.
   *
   * @since 0.1.0
   * @category models
   */
  export type LiveOutput = OutputChunk | OutputDropped

  /**
   * A foreground run watched while it runs.
   *
   * @since 0.1.0
   * @category models
   */
  export interface LiveRun {
    /**
     * The output in the order it was read (per stream), ending once the run has settled. A consumer
     * that reads slowly or never loses chunks (marked by {@link OutputDropped}), never the result: at
     * most {@link liveOutputBufferBytes} wait for it.
     */
    readonly output: Stream.Stream<LiveOutput>
    /** Exactly what `run` returns. */
    readonly result: Effect.Effect<RunResult, RunError>
  }

  /**
   * Lifecycle of a background process.
   *
   * @since 0.1.0
   * @category models
   */
  export type ProcessStatus = "running" | "completed" | "killed"

  /**
   * A point-in-time view of a background process.
   *
   * @since 0.1.0
   * @category models
   */
  export interface ProcessState {
    readonly status: ProcessStatus
    readonly exitCode: number | null
    readonly signal: string | null
    readonly sandbox?: SandboxFacts
    /** As {@link RunResult.networkRefusals}. */
    readonly networkRefusals?: ReadonlyArray<string>
  }

  /**
   * One consuming read of a background process's output.
   *
   * @since 0.1.0
   * @category models
   */
  export interface OutputRead {
    /** New output since the previous read, merged as `stdout + [sep] + "[stderr]\n" + stderr`. */
    readonly delta: string
    /** Some output was produced but dropped from memory before this read. */
    readonly lossy: boolean
    readonly stdoutSpillPath?: string
    readonly stderrSpillPath?: string
  }

  /**
   * A background process handle. No timeout applies to it.
   *
   * @since 0.1.0
   * @category models
   */
  export interface Process {
    /** Executor-local id (`proc-<n>`). */
    readonly id: string
    readonly owner: string | undefined
    readonly state: Effect.Effect<ProcessState>
    /** Completes once the process has closed; never fails (a spawn failure settles as `killed`). */
    readonly done: Effect.Effect<ProcessState>
    /** Consuming: never re-delivers a byte. */
    readonly readOutput: Effect.Effect<OutputRead>
    /**
     * The output produced from the moment the stream is run, until the process settles (at once if it
     * has). Does not consume: `readOutput` still returns every byte. Bounded like {@link LiveRun.output}.
     */
    readonly output: Stream.Stream<LiveOutput>
    /** Kills the group (TERM → KILL); `false` once the process has finished. Idempotent. */
    readonly kill: Effect.Effect<boolean>
  }

  /**
   * Why a foreground call failed: only infrastructure faults, never the command's own failure.
   *
   * @since 0.1.0
   * @category models
   */
  export type RunError = BashRequestError | AbortedBeforeSpawnError | SpawnError | SandboxUnavailableError

  /**
   * Why a background start failed.
   *
   * @since 0.1.0
   * @category models
   */
  export type StartError = BashRequestError | AbortedBeforeSpawnError | BackgroundLimitError | SandboxUnavailableError
}
