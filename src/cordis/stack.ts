/**
 * The layer graph one plugin instance runs: the local executor (or a sandboxing or container one),
 * the managed environment, the task runtime and the tools, with Approval and SessionPersistence as
 * the harness adapter backs them.
 */
import * as BashStack from "../BashStack.js"
import type * as LocalBashExecutor from "../layers/LocalBashExecutor.js"
import type * as SandboxBashExecutor from "../layers/SandboxBashExecutor.js"
import type { EffectBashConfig } from "./config.js"
import type { HarnessInstance } from "./HarnessAdapter.js"

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
 * The plugin's layer graph: {@link BashStack} with the host-backed services of the harness adapter.
 */
export const cordisStackLayer = (config: EffectBashConfig, host: HarnessInstance["services"]) =>
  BashStack.layer(
    {
      executor: executorConfigOf(config),
      ...(config.enableRunInBackground === undefined ? {} : { enableRunInBackground: config.enableRunInBackground }),
      ...(config.dshHome === undefined ? {} : { dshHome: config.dshHome }),
      ...(config.sessionJsonlDir === undefined ? {} : { sessionJsonlDir: config.sessionJsonlDir }),
      ...(config.sandbox === undefined ? {} : { sandbox: sandboxConfigOf(config.sandbox) }),
      ...(config.container === undefined ? {} : { container: config.container })
    },
    host
  )
