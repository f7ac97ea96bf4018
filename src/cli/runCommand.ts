/**
 * `effect-bash run [flags] -- <command...>`: one command through the whole tool stack, printing
 * exactly what a model would read (or the canonical JSON value with `--json`), exiting with a code
 * that mirrors the command's (see `exit.ts`).
 *
 * @since 0.1.0
 */
import { Args, Command, Options } from "@effect/cli"
import { Effect, Schema } from "effect"
import { AgentTools } from "../tool/AgentTools.js"
import { ExitCode, runExitCode, toolErrorExitCode } from "./exit.js"
import { writeStderr, writeStdout } from "./output.js"
import { RunValueJson } from "./runValue.js"
import type { FlagNames } from "./runArgv.js"
import { resolveSettings, settingsFlagNames, settingsOptions } from "./settings.js"
import { cliStack } from "./stack.js"

const json = Options.boolean("json").pipe(
  Options.withDescription("Print the bash tool's canonical result value as one line of JSON instead of its text")
)

const description = Options.text("description").pipe(
  Options.withDescription("The bash tool's description field (what a UI shows)"),
  Options.withDefault("Run a command from the effect-bash CLI")
)

const command = Args.text({ name: "command" }).pipe(
  Args.atLeast(1),
  Args.withDescription("The command; its words are joined with spaces and run by `bash -c`")
)

/**
 * The flags `run` accepts (see `runArgv.ts`).
 *
 * @since 0.1.0
 */
export const runFlagNames: FlagNames = {
  valued: ["description", ...settingsFlagNames.valued],
  boolean: ["json", ...settingsFlagNames.boolean]
}

/**
 * Runs one command through the `bash` tool (no session, no background) and prints its result.
 *
 * @since 0.1.0
 */
export const runOnce = Effect.fn("Cli.run")(function*(input: {
  readonly command: string
  readonly description: string
  readonly json: boolean
}) {
  const tools = yield* AgentTools
  const result = yield* tools.call("bash", { command: input.command, description: input.description }, {
    callId: "cli-run"
  })
  if (result.isError) {
    yield* writeStderr(`${result.text}\n`)
    return yield* new ExitCode({ code: toolErrorExitCode })
  }
  const value = yield* Schema.decodeUnknown(RunValueJson)(result.value).pipe(Effect.orDie)
  // A terminal gets a final newline for a tidy prompt; a pipe gets the text byte for byte.
  const text = input.json ? `${JSON.stringify(result.value)}\n` : result.text
  yield* writeStdout(process.stdout.isTTY && !text.endsWith("\n") ? `${text}\n` : text)
  const code = runExitCode(value)
  if (code !== 0) return yield* new ExitCode({ code })
})

/**
 * The `run` subcommand.
 *
 * @since 0.1.0
 */
export const runCommand = Command.make(
  "run",
  { settings: settingsOptions, json, description, command },
  (input) =>
    Effect.gen(function*() {
      const settings = yield* resolveSettings(input.settings)
      yield* runOnce({ command: input.command.join(" "), description: input.description, json: input.json }).pipe(
        Effect.provide(cliStack(settings, { background: false }))
      )
    })
).pipe(Command.withDescription("Run one command through the bash tool and print what a model would read"))
