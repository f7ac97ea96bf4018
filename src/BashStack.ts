/**
 * The whole graph in one Layer: the local (or, with `sandbox`, the sandboxing; with `container`, the
 * container) executor, per-session sandbox modes, the managed environment (with the session-JSONL
 * contributor), the task runtime, session persistence, approval when given, and the tools with the
 * task tools attached as the runtime's control surface.
 *
 * @since 0.1.0
 */
import type * as ConfigError from "effect/ConfigError"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as ExecutionStrategy from "effect/ExecutionStrategy"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Scope from "effect/Scope"
import type { Approval } from "./services/Approval.js"
import type { BashEnvRegistrationError } from "./services/BashEnvRegistry.js"
import { BashEnvRegistry } from "./services/BashEnvRegistry.js"
import type { BashExecutor } from "./services/BashExecutor.js"
import { SandboxSessions } from "./services/SandboxSessions.js"
import type { SessionPersistence } from "./services/SessionPersistence.js"
import { Tasks } from "./services/Tasks.js"
import type { PtySpawner } from "./services/PtySpawner.js"
import { Terminals } from "./services/Terminals.js"
import type { AgentTools } from "./services/AgentTools.js"
import type { CompletionNotices } from "./services/CompletionNotices.js"
import * as AgentToolsLive from "./tool/AgentToolsLive.js"
import * as BashEnvRegistryLive from "./layers/BashEnvRegistryLive.js"
import type * as DockerBashExecutor from "./layers/DockerBashExecutor.js"
import { LocalBashExecutorConfigError } from "./layers/executorSettings.js"
import * as LocalBashExecutor from "./layers/LocalBashExecutor.js"
import * as SandboxBashExecutor from "./layers/SandboxBashExecutor.js"
import * as SandboxSessionsLive from "./layers/SandboxSessionsLive.js"
import * as SessionJsonlEnvContributor from "./layers/SessionJsonlEnvContributor.js"
import * as SessionPersistenceJsonl from "./layers/SessionPersistenceJsonl.js"
import * as TasksLive from "./layers/TasksLive.js"
import * as NodePtySpawner from "./layers/NodePtySpawner.js"
import * as TerminalsLive from "./layers/TerminalsLive.js"

/**
 * Settings of the whole graph.
 *
 * @since 0.1.0
 * @category models
 */
export interface BashStackConfig {
  readonly executor?: LocalBashExecutor.Settings.Input
  /** Confine commands: the sandboxing executor with `executor`'s settings plus these. */
  readonly sandbox?: SandboxBashExecutor.Settings.Input
  /**
   * Run commands in containers on a Docker Engine: the container executor with `executor`'s settings
   * plus these (needs the optional peer `docker-modem`). Not together with `sandbox`.
   */
  readonly container?: DockerBashExecutor.Settings.Input
  readonly tasks?: TasksLive.Settings.Input
  /** Offer `run_in_background` (default true). */
  readonly enableRunInBackground?: boolean
  readonly dshHome?: string
  /** Store sessions as JSONL here (and contribute `DSH_SESSION_JSONL`); no persistence when absent. */
  readonly sessionJsonlDir?: string
  /**
   * Persistent terminals and the six `terminal_*` tools (needs the optional peer `node-pty`): `true`
   * or settings to offer them; off when absent or `false`. Their shells run as the executor's commands
   * do: under `sandbox`, in bubblewrap with the session's mode. Not together with `container` yet
   * (the layer fails: never unconfined).
   */
  readonly terminals?: boolean | TerminalsLive.Settings.Input
}

/**
 * Host-specific replacements for parts of the graph.
 *
 * @since 0.1.0
 * @category models
 */
export interface BashStackOverrides {
  /** An approval channel; without one, escalations fail as "no approval service is composed". */
  readonly approval?: Layer.Layer<Approval>
  /**
   * Replaces the configured persistence (JSONL under `sessionJsonlDir`, or none), e.g. to prefer a
   * host's own with the configured one as its fallback.
   */
  readonly persistence?: (configured: Option.Option<Layer.Layer<SessionPersistence>>) => Layer.Layer<SessionPersistence>
  /** Replaces the local executor (e.g. a confining one). */
  readonly executor?: Layer.Layer<
    BashExecutor,
    LocalBashExecutorConfigError | DockerBashExecutor.ContainerUnavailableError | ConfigError.ConfigError
  >
  /** Replaces the PTY spawner of the terminals (default `NodePtySpawner.layer`), e.g. with a fake. */
  readonly ptySpawner?: Layer.Layer<PtySpawner>
}

/**
 * Everything the stack provides. `SessionPersistence` is in the context only when composed
 * (`sessionJsonlDir` or `overrides.persistence`), `Terminals` only with `terminals`; read them with
 * `Effect.serviceOption`.
 *
 * @since 0.1.0
 * @category models
 */
export type BashStackServices =
  | AgentTools
  | CompletionNotices
  | BashExecutor
  | BashEnvRegistry
  | Tasks
  | SandboxSessions

// Loaded only when configured: its Docker Engine client brings Node's HTTP and TLS stacks along.
const containerExecutor = (settings: DockerBashExecutor.Settings.Input) =>
  Layer.unwrapEffect(
    Effect.map(Effect.promise(() => import("./layers/DockerBashExecutor.js")), (docker) => docker.layer(settings))
  )

/**
 * The graph as one Layer.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (
  config: BashStackConfig = {},
  overrides: BashStackOverrides = {}
): Layer.Layer<
  BashStackServices,
  | LocalBashExecutorConfigError
  | DockerBashExecutor.ContainerUnavailableError
  | ConfigError.ConfigError
  | BashEnvRegistrationError
> => {
  const configured = config.sessionJsonlDir === undefined
    ? Option.none()
    : Option.some(SessionPersistenceJsonl.layer({ directory: config.sessionJsonlDir }))
  const persistence: Option.Option<Layer.Layer<never>> = overrides.persistence
    ? Option.some(overrides.persistence(configured))
    : configured
  const executor = overrides.executor ??
    (config.container !== undefined
      ? config.sandbox === undefined
        ? containerExecutor({ ...config.executor, ...config.container })
        : Layer.fail(
          new LocalBashExecutorConfigError({
            field: "container",
            message: "bash-container: container and sandbox are two executors; configure one of them"
          })
        )
      : config.sandbox === undefined
      ? LocalBashExecutor.layer(config.executor)
      : SandboxBashExecutor.layer({ ...config.executor, ...config.sandbox }))
  // One scoped constructor rather than a graph of layers: each layer of a graph is memoized with
  // its own scope, refs and fibers when built and released, which a command-line start pays for.
  // Built and released as the merge of layers it replaces: the executor (with the session modes over
  // it), persistence, approval, the task runtime and the registry side by side, each in a fiber of
  // its own (what one sets in its fiber, a `ConfigProvider` say, does not reach the others), then
  // the contributor and the tools over all of them; released the tools first, then the rest together
  // (a task's cancel may wait for the executor's kill of its process). Layers given to it are built
  // with the app's other layers: one given twice, or also used by the app, is built once.
  return Layer.scopedContext(Effect.gen(function*() {
    const memoMap = yield* Layer.CurrentMemoMap
    const together = yield* Effect.flatMap(Effect.scope, (scope) => Scope.fork(scope, ExecutionStrategy.parallel))
    const own = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
      Effect.flatMap(Scope.fork(together, ExecutionStrategy.sequential), (scope) => Scope.extend(effect, scope))
    const build = <ROut, E>(layer: Layer.Layer<ROut, E>) =>
      own(Effect.flatMap(Effect.scope, (scope) => Layer.buildWithMemoMap(layer, memoMap, scope)))
    // Persistence and approval are in the context only when composed (see `BashStackServices`).
    const composed = (layer: Option.Option<Layer.Layer<never>>) =>
      Option.match(layer, { onNone: () => Effect.succeed(Context.empty()), onSome: build })
    // The terminals' transcripts go where the executor's spill files go, unless told otherwise.
    const spillParent = config.executor?.spillParent
    const terminalSettings = config.terminals === undefined || config.terminals === false
      ? undefined
      : {
        ...(spillParent === undefined ? {} : { spillParent }),
        ...(config.terminals === true ? {} : config.terminals)
      }
    // Over the executor and the session modes: a terminal's shell runs as the session's calls do.
    const terminals = (executorContext: Context.Context<BashExecutor | SandboxSessions>) =>
      terminalSettings === undefined
        ? Effect.succeed(executorContext)
        : own(Effect.map(
          Effect.provide(
            TerminalsLive.make(terminalSettings),
            Layer.succeedContext(executorContext).pipe(Layer.merge(overrides.ptySpawner ?? NodePtySpawner.layer))
          ),
          (service) => Context.add(executorContext, Terminals, service)
        ))
    const [executorContext, persistenceContext, approvalContext, tasks, registry] = yield* Effect
      .all([
      Effect.flatMap(build(executor), (context) =>
        Effect.flatMap(Effect.provide(SandboxSessionsLive.make, context), (sessions) =>
          terminals(Context.add(context, SandboxSessions, sessions)))),
      composed(persistence),
      composed(Option.fromNullable(overrides.approval)),
      own(TasksLive.make(config.tasks)),
      BashEnvRegistryLive.make(config.dshHome === undefined ? {} : { dshHome: config.dshHome })
    ], { concurrency: "unbounded" })
    const services = Context.merge(Context.merge(executorContext, persistenceContext), approvalContext).pipe(
      Context.add(Tasks, tasks),
      Context.add(BashEnvRegistry, registry)
    )
    yield* own(Effect.provide(SessionJsonlEnvContributor.register, services))
    const tools = yield* Effect.provide(
      AgentToolsLive.make(
        config.enableRunInBackground === undefined ? {} : { enableRunInBackground: config.enableRunInBackground }
      ),
      services
    )
    return Context.merge(services, tools)
  }))
}
