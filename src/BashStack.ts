/**
 * The whole graph in one Layer: the local (or, with `sandbox`, the sandboxing) executor, per-session
 * sandbox modes, the managed environment (with the session-JSONL
 * contributor), the task runtime, session persistence, approval when given, and the tools with the
 * task tools attached as the runtime's control surface.
 *
 * @since 0.1.0
 */
import type { ConfigError } from "effect"
import { Layer } from "effect"
import type { Approval } from "./services/Approval.js"
import type { BashEnvRegistrationError, BashEnvRegistry } from "./services/BashEnvRegistry.js"
import type { BashExecutor } from "./services/BashExecutor.js"
import type { SandboxSessions } from "./services/SandboxSessions.js"
import type { SessionPersistence } from "./services/SessionPersistence.js"
import type { Tasks } from "./services/Tasks.js"
import type { AgentTools } from "./services/AgentTools.js"
import type { CompletionNotices } from "./services/CompletionNotices.js"
import * as AgentToolsLive from "./tool/AgentToolsLive.js"
import { BashEnvRegistryLive } from "./layers/BashEnvRegistryLive.js"
import type { LocalBashExecutorConfig, LocalBashExecutorConfigError } from "./layers/LocalBashExecutor.js"
import { LocalBashExecutor } from "./layers/LocalBashExecutor.js"
import type { SandboxBashExecutorConfig } from "./layers/SandboxBashExecutor.js"
import { SandboxBashExecutor } from "./layers/SandboxBashExecutor.js"
import { SandboxSessionsLive } from "./layers/SandboxSessionsLive.js"
import { SessionJsonlEnvContributor } from "./layers/SessionJsonlEnvContributor.js"
import { SessionPersistenceJsonl } from "./layers/SessionPersistenceJsonl.js"
import { SessionPersistenceNone } from "./layers/SessionPersistenceNone.js"
import type { TasksLiveConfig } from "./layers/TasksLive.js"
import { TasksLive } from "./layers/TasksLive.js"

/**
 * Settings of the whole graph.
 *
 * @since 0.1.0
 */
export interface BashStackConfig {
  readonly executor?: Partial<LocalBashExecutorConfig>
  /** Confine commands: the sandboxing executor with `executor`'s settings plus these. */
  readonly sandbox?: Partial<SandboxBashExecutorConfig>
  readonly tasks?: Partial<TasksLiveConfig>
  /** Offer `run_in_background` (default true). */
  readonly enableRunInBackground?: boolean
  readonly dshHome?: string
  /** Store sessions as JSONL here (and contribute `DSH_SESSION_JSONL`); no persistence when absent. */
  readonly sessionJsonlDir?: string
}

/**
 * Host-specific replacements for parts of the graph.
 *
 * @since 0.1.0
 */
export interface BashStackOverrides {
  /** An approval channel; without one, escalations fail as "no approval service is composed". */
  readonly approval?: Layer.Layer<Approval>
  /** Wraps the configured persistence (JSONL or none), e.g. to prefer a host's own. */
  readonly persistence?: (configured: Layer.Layer<SessionPersistence>) => Layer.Layer<SessionPersistence>
  /** Replaces the local executor (e.g. a confining one). */
  readonly executor?: Layer.Layer<BashExecutor, LocalBashExecutorConfigError | ConfigError.ConfigError>
}

/**
 * Everything the stack provides.
 *
 * @since 0.1.0
 */
export type BashStackServices =
  | AgentTools
  | CompletionNotices
  | BashExecutor
  | BashEnvRegistry
  | Tasks
  | SessionPersistence
  | SandboxSessions

/**
 * The graph as one Layer.
 *
 * @since 0.1.0
 */
export const BashStack = {
  layer: (
    config: BashStackConfig = {},
    overrides: BashStackOverrides = {}
  ): Layer.Layer<
    BashStackServices,
    LocalBashExecutorConfigError | ConfigError.ConfigError | BashEnvRegistrationError
  > => {
    const configured = config.sessionJsonlDir === undefined
      ? SessionPersistenceNone.layer
      : SessionPersistenceJsonl.layer({ directory: config.sessionJsonlDir })
    const executor = overrides.executor ??
      (config.sandbox === undefined
        ? LocalBashExecutor.layer(config.executor)
        : SandboxBashExecutor.layer({ ...config.executor, ...config.sandbox }))
    const services = Layer.mergeAll(
      Layer.provideMerge(SandboxSessionsLive.layer, executor),
      TasksLive.layer(config.tasks),
      BashEnvRegistryLive.layer(config.dshHome === undefined ? {} : { dshHome: config.dshHome }),
      overrides.persistence ? overrides.persistence(configured) : configured,
      overrides.approval ?? Layer.empty
    )
    const withContributor = Layer.merge(services, SessionJsonlEnvContributor.layer.pipe(Layer.provide(services)))
    const tools = AgentToolsLive.layer(
      config.enableRunInBackground === undefined ? {} : { enableRunInBackground: config.enableRunInBackground }
    )
    return Layer.provideMerge(tools, withContributor)
  }
} as const
