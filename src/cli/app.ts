/**
 * The `effect-bash` command line: `run`, `mcp` and `demo`, and how a finished program reports itself.
 */
import * as Command from "@effect/cli/Command"
import * as ValidationError from "@effect/cli/ValidationError"
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import * as NodePath from "@effect/platform-node/NodePath"
import * as NodeTerminal from "@effect/platform-node/NodeTerminal"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as LogLevel from "effect/LogLevel"
import { checkArgvBytes, checkWizard } from "./commandLine.js"
import { demoCommand } from "./demoCommand.js"
import { errorMessage } from "./errorMessage.js"
import { ExitCode, usageExitCode } from "./exit.js"
import { withTidyCliConsole } from "./helpText.js"
import { stderrLogger } from "./logger.js"
import { mcpCommand } from "./mcpCommand.js"
import { writeStderr } from "./output.js"
import { checkRunArgv } from "./runArgv.js"
import { runCommand, runFlagNames } from "./runCommand.js"
import { SettingsError } from "./settings.js"
import { packageVersion } from "./version.js"

/**
 * The root command and its subcommands.
 */
const effectBash = Command.make("effect-bash").pipe(
  Command.withDescription("A model-facing bash tool: run a command, serve MCP on stdio, or take the demo tour"),
  Command.withSubcommands([runCommand, mcpCommand, demoCommand])
)

const cli = Command.run(effectBash, { name: "effect-bash", version: packageVersion })

const report = (message: string, code: number) =>
  writeStderr(`${message}\n`).pipe(Effect.andThen(Effect.fail(new ExitCode({ code }))))

/**
 * Log lines reach stderr only when asked for with `--log-level`, or under `mcp`, whose stderr is the
 * client's log; `run` and `demo` share stderr with their user.
 */
const logLevelFor = (argv: ReadonlyArray<string>): LogLevel.LogLevel =>
  argv[2] === "mcp" || argv.some((arg) => arg === "--log-level" || arg.startsWith("--log-level="))
    ? LogLevel.Info
    : LogLevel.None

/**
 * Runs the CLI on `argv` (`process.argv`), `started` as the process was started (its command line is
 * checked first, see `commandLine.ts`). Every failure is reported on stderr here and becomes an
 * {@link ExitCode}: usage errors (already printed by @effect/cli) and invalid settings exit 2,
 * anything else (defects included) exits 1 with `effect-bash: <message>`.
 */
export const main = (
  argv: ReadonlyArray<string>,
  started: {
    /** The command line as the kernel holds it (`/proc/self/cmdline`), where it says. */
    readonly commandLine: Uint8Array | undefined
    readonly stdinIsTerminal: boolean
  }
): Effect.Effect<void, ExitCode> =>
  Effect.suspend(() =>
    checkArgvBytes(argv, started.commandLine).pipe(
      Effect.flatMap((argv) => checkRunArgv(argv, runFlagNames)),
      Effect.flatMap((checked) => checkWizard(checked, started.stdinIsTerminal)),
      Effect.flatMap(cli)
    )
  ).pipe(
    withTidyCliConsole,
    Effect.catchAll((error) => {
      if (error instanceof ExitCode) return Effect.fail(error)
      if (ValidationError.isValidationError(error)) return Effect.fail(new ExitCode({ code: usageExitCode }))
      const code = error instanceof SettingsError ? usageExitCode : 1
      return report(`effect-bash: ${errorMessage(error)}`, code)
    }),
    Effect.catchAllDefect((defect) => report(`effect-bash: unexpected failure\n${Cause.pretty(Cause.die(defect))}`, 1)),
    // What @effect/cli needs (`CliApp.Environment`); NodeContext would also load the command executor and workers.
    Effect.provide(Layer.mergeAll(NodeFileSystem.layer, NodePath.layer, NodeTerminal.layer)),
    Effect.provide(stderrLogger),
    Logger.withMinimumLogLevel(logLevelFor(argv))
  )
