/**
 * The layer graph one plugin instance runs: the local executor, the managed environment, the task
 * runtime and the tools, with Approval and SessionPersistence backed by the host's services.
 *
 * @since 0.1.0
 */
import { Layer } from "effect"
import { BashEnvRegistryLive } from "../layers/BashEnvRegistryLive.js"
import { LocalBashExecutor } from "../layers/LocalBashExecutor.js"
import type { LocalBashExecutorConfig } from "../layers/LocalBashExecutor.js"
import { SessionJsonlEnvContributor } from "../layers/SessionJsonlEnvContributor.js"
import { SessionPersistenceJsonl } from "../layers/SessionPersistenceJsonl.js"
import { SessionPersistenceNone } from "../layers/SessionPersistenceNone.js"
import { TasksLive } from "../layers/TasksLive.js"
import { AgentToolsLive } from "../tool/AgentToolsLive.js"
import type { EffectBashConfig } from "./config.js"
import type { HarnessCalls } from "./HarnessCalls.js"
import type { HostApproval, HostSessionPersistence } from "./host.js"
import type { HostLookup } from "./hostLayers.js"
import { hostApprovalLayer, hostSessionPersistenceLayer } from "./hostLayers.js"

/**
 * The host services the graph may consult at call time.
 *
 * @since 0.1.0
 */
export interface HostServices {
  readonly approval: HostLookup<HostApproval>
  readonly sessionPersistence: HostLookup<HostSessionPersistence>
  readonly calls: HarnessCalls
}

const executorConfigOf = (config: EffectBashConfig): Partial<LocalBashExecutorConfig> => {
  const {
    dshHome: _dshHome,
    enableRunInBackground: _enableRunInBackground,
    registerTools: _registerTools,
    sessionJsonlDir: _sessionJsonlDir,
    ...executor
  } = config
  return executor
}

/**
 * The plugin's layer graph.
 *
 * @since 0.1.0
 */
export const cordisStackLayer = (config: EffectBashConfig, host: HostServices) => {
  const persistence = hostSessionPersistenceLayer(host.sessionPersistence, host.calls).pipe(
    Layer.provide(
      config.sessionJsonlDir === undefined
        ? SessionPersistenceNone.layer
        : SessionPersistenceJsonl.layer({ directory: config.sessionJsonlDir })
    )
  )
  const env = BashEnvRegistryLive.layer(config.dshHome === undefined ? {} : { dshHome: config.dshHome })
  const services = Layer.mergeAll(
    LocalBashExecutor.layer(executorConfigOf(config)),
    TasksLive.layer(),
    hostApprovalLayer(host.approval, host.calls),
    persistence,
    env
  )
  const withContributor = Layer.merge(services, SessionJsonlEnvContributor.layer.pipe(Layer.provide(services)))
  return AgentToolsLive.layer(
    config.enableRunInBackground === undefined ? {} : { enableRunInBackground: config.enableRunInBackground }
  ).pipe(Layer.provideMerge(withContributor))
}
