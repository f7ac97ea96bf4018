/**
 * The layer graph one plugin instance runs: the local executor, the managed environment, the task
 * runtime and the tools, with Approval and SessionPersistence backed by the host's services.
 */
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as BashStack from "../BashStack.js"
import type * as LocalBashExecutor from "../layers/LocalBashExecutor.js"
import type * as SandboxBashExecutor from "../layers/SandboxBashExecutor.js"
import type { EffectBashConfig } from "./config.js"
import type { HarnessCalls } from "./HarnessCalls.js"
import type { HostApproval, HostSessionPersistence } from "./host.js"
import type { HostLookup } from "./hostLayers.js"
import { hostApprovalLayer, hostSessionPersistenceLayer } from "./hostLayers.js"

/**
 * The host services the graph may consult at call time.
 */
export interface HostServices {
  readonly approval: HostLookup<HostApproval>
  readonly sessionPersistence: HostLookup<HostSessionPersistence>
  readonly calls: HarnessCalls
}

const executorConfigOf = (config: EffectBashConfig): LocalBashExecutor.Settings.Input => {
  const {
    completionDelivery: _completionDelivery,
    dshHome: _dshHome,
    enableRunInBackground: _enableRunInBackground,
    registerTools: _registerTools,
    sessionJsonlDir: _sessionJsonlDir,
    sandbox: _sandbox,
    container: _container,
    ...executor
  } = config
  return executor
}

const sandboxConfigOf = (
  sandbox: NonNullable<EffectBashConfig["sandbox"]>
): SandboxBashExecutor.Settings.Input => {
  const { mode, ...rest } = sandbox
  return { sandboxMode: mode, ...rest }
}

/**
 * The plugin's layer graph: {@link BashStack} with Approval and SessionPersistence backed by the host.
 */
export const cordisStackLayer = (config: EffectBashConfig, host: HostServices) =>
  BashStack.layer(
    {
      executor: executorConfigOf(config),
      ...(config.enableRunInBackground === undefined ? {} : { enableRunInBackground: config.enableRunInBackground }),
      ...(config.dshHome === undefined ? {} : { dshHome: config.dshHome }),
      ...(config.sessionJsonlDir === undefined ? {} : { sessionJsonlDir: config.sessionJsonlDir }),
      ...(config.sandbox === undefined ? {} : { sandbox: sandboxConfigOf(config.sandbox) }),
      ...(config.container === undefined ? {} : { container: config.container })
    },
    {
      approval: hostApprovalLayer(host.approval, host.calls),
      persistence: (configured) =>
        Option.match(configured, {
          onNone: () => hostSessionPersistenceLayer(host.sessionPersistence, host.calls),
          onSome: (stored) => hostSessionPersistenceLayer(host.sessionPersistence, host.calls).pipe(Layer.provide(stored))
        })
    }
  )
