/**
 * `effect-bash mcp [flags]`: the tools as an MCP server on stdio. The server (the MCP SDK and its
 * schemas) is loaded when the subcommand runs, so `run` and `demo` never load it.
 */
import * as Command from "@effect/cli/Command"
import * as Options from "@effect/cli/Options"
import * as Effect from "effect/Effect"
import { settingsOptions } from "./settings.js"

const noBackground = Options.boolean("no-background").pipe(
  Options.withDescription("Do not offer run_in_background on the bash tool")
)

const terminals = Options.boolean("terminals").pipe(
  Options.withDescription(
    "Also serve the six terminal_* tools: persistent shells where the bash calls run (on the host or in a sandbox they need node-pty)"
  )
)

/**
 * The `mcp` subcommand.
 */
export const mcpCommand = Command.make("mcp", { settings: settingsOptions, noBackground, terminals }, (input) =>
  Effect.flatMap(Effect.promise(() => import("./mcpStdio.js")), ({ mcp }) => mcp(input))).pipe(
    Command.withDescription("Serve bash, task_output, task_list and task_kill as an MCP server on stdio")
  )
