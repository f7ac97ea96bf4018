/**
 * The tool stack every subcommand runs on, with the CLI's settings.
 *
 * @since 0.1.0
 */
import { Layer } from "effect"
import { BashEnvRegistryLive } from "../layers/BashEnvRegistryLive.js"
import { LocalBashExecutor } from "../layers/LocalBashExecutor.js"
import { TasksLive } from "../layers/TasksLive.js"
import { AgentToolsLive } from "../tool/AgentToolsLive.js"
import type { CliSettings } from "./settings.js"

/**
 * The composed tools over the local executor, the task runtime and the managed environment;
 * `background` offers `run_in_background` on the bash tool. Releasing it kills and awaits every
 * process it started.
 *
 * @since 0.1.0
 */
export const cliStack = (settings: CliSettings, options: { readonly background: boolean }) =>
  AgentToolsLive.layer({ enableRunInBackground: options.background }).pipe(
    Layer.provideMerge(
      Layer.mergeAll(LocalBashExecutor.layer(settings.executor), TasksLive.layer(), BashEnvRegistryLive.layer())
    )
  )
