/**
 * The tool stack every subcommand runs on: `BashStack` with the CLI's settings.
 *
 * @since 0.1.0
 */
import { BashStack } from "../layers/BashStack.js"
import type { CliSettings } from "./settings.js"

/**
 * The composed tools over the local (or, with a sandbox mode, the sandboxing) executor, the task runtime and the managed environment;
 * `background` offers `run_in_background` on the bash tool. Releasing it kills and awaits every
 * process it started.
 *
 * @since 0.1.0
 */
export const cliStack = (settings: CliSettings, options: { readonly background: boolean }) =>
  BashStack.layer({
    executor: settings.executor,
    ...(settings.sandbox === undefined ? {} : { sandbox: settings.sandbox }),
    enableRunInBackground: options.background
  })
