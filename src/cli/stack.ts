/**
 * The tool stack every subcommand runs on: `BashStack` with the CLI's settings.
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as BashStack from "../BashStack.js"
import type { Approval } from "../services/Approval.js"
import type { CliSettings } from "./settings.js"
import { makeShutdown, processSignals } from "./shutdown.js"

const stackWith = (
  settings: CliSettings,
  background: boolean,
  terminals: boolean,
  escalation: Effect.Effect<void>,
  approval: Layer.Layer<Approval> | undefined
) =>
  BashStack.layer({
    executor: { ...settings.executor, escalation },
    ...(settings.sandbox === undefined ? {} : { sandbox: settings.sandbox }),
    ...(settings.container === undefined ? {} : { container: settings.container }),
    enableRunInBackground: background,
    ...(terminals ? { terminals: { cwd: settings.workdir } } : {})
  }, approval === undefined ? {} : { approval })

/**
 * The composed tools over the local (or, with a sandbox mode, the sandboxing; with a container image,
 * the container) executor, the task runtime and the managed environment; `background` offers `run_in_background` on the bash tool;
 * `escalation` (see `shutdown.ts`) makes every kill SIGKILL at once when it completes — without one, a
 * second SIGINT/SIGTERM does (the first interrupts the program, and its kills get their grace).
 * `approval` answers sandbox escalations; without it the tool offers none. `terminals` adds the
 * terminal tools (persistent PTY shells starting in the executor's working directory).
 * Releasing it kills and awaits every process it started.
 */
export const cliStack = (
  settings: CliSettings,
  options: {
    readonly background: boolean
    readonly terminals?: boolean
    readonly escalation?: Effect.Effect<void>
    readonly approval?: Layer.Layer<Approval>
  }
) =>
  options.escalation === undefined
    ? Layer.unwrapScoped(
      // The listener is acquired before the stack, so it outlives the stack's release.
      Effect.map(makeShutdown({ signals: processSignals }), (shutdown) =>
        stackWith(settings, options.background, options.terminals ?? false, shutdown.escalation, options.approval))
    )
    : stackWith(settings, options.background, options.terminals ?? false, options.escalation, options.approval)
