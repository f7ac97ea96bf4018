/**
 * The layer graph one plugin instance runs: the local executor (or a sandboxing or container one),
 * the managed environment, the task runtime and the tools, with Approval and SessionPersistence as
 * the harness adapter backs them.
 */
import * as BashStack from "../BashStack.js"
import * as LocalBashExecutor from "../layers/LocalBashExecutor.js"
import type * as SandboxBashExecutor from "../layers/SandboxBashExecutor.js"
import type { PluginConfig } from "./config.js"
import type { HarnessInstance } from "./HarnessAdapter.js"

/** The local executor's settings among the config's fields (a harness adapter adds fields of its own). */
const executorConfigOf = (config: PluginConfig): LocalBashExecutor.Settings.Input =>
  Object.fromEntries(Object.entries(config).filter(([key]) => key in LocalBashExecutor.Settings.fields))

const sandboxConfigOf = (
  sandbox: NonNullable<PluginConfig["sandbox"]>
): SandboxBashExecutor.Settings.Input => {
  const { mode, ...rest } = sandbox
  return { sandboxMode: mode, ...rest }
}

/**
 * The plugin's layer graph: {@link BashStack} with the host-backed services of the harness adapter.
 */
export const cordisStackLayer = (config: PluginConfig, host: HarnessInstance<PluginConfig>["services"]) =>
  BashStack.layer(
    {
      executor: executorConfigOf(config),
      ...(config.enableRunInBackground === undefined ? {} : { enableRunInBackground: config.enableRunInBackground }),
      ...(config.dshHome === undefined ? {} : { dshHome: config.dshHome }),
      ...(config.sessionJsonlDir === undefined ? {} : { sessionJsonlDir: config.sessionJsonlDir }),
      ...(config.sandbox === undefined ? {} : { sandbox: sandboxConfigOf(config.sandbox) }),
      ...(config.container === undefined ? {} : { container: config.container }),
      ...(config.terminals === undefined ? {} : { terminals: config.terminals })
    },
    host
  )
