/**
 * The tool stack every subcommand runs on: `BashStack` with the CLI's settings.
 *
 * @since 0.1.0
 */
import type { Effect } from "effect"
import { BashStack } from "../layers/BashStack.js"
import type { CliSettings } from "./settings.js"

/**
 * The composed tools over the local (or, with a sandbox mode, the sandboxing) executor, the task
 * runtime and the managed environment; `background` offers `run_in_background` on the bash tool;
 * `escalation` (see `shutdown.ts`) makes every kill SIGKILL at once when it completes. Releasing it
 * kills and awaits every process it started.
 *
 * @since 0.1.0
 */
export const cliStack = (
  settings: CliSettings,
  options: { readonly background: boolean; readonly escalation?: Effect.Effect<void> }
) =>
  BashStack.layer({
    executor: options.escalation === undefined
      ? settings.executor
      : { ...settings.executor, escalation: options.escalation },
    ...(settings.sandbox === undefined ? {} : { sandbox: settings.sandbox }),
    enableRunInBackground: options.background
  })
