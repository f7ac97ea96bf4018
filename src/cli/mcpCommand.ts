/**
 * `effect-bash mcp [flags]`: the tools as an MCP server on stdio.
 *
 * Shutdown: the SDK's stdio transport ignores stdin EOF, so the server runs until stdin ends or
 * SIGINT/SIGTERM interrupts it (`NodeRuntime.runMain`). Either way the scopes close in order: wait
 * (bounded) for in-flight calls to answer → close the server → interrupt what is left → release the
 * stack, which kills every process group, foreground and background, and awaits their exit.
 *
 * @since 0.1.0
 */
import { Command, Options } from "@effect/cli"
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js"
import { Effect } from "effect"
import type { ToolSession } from "../services/ToolExecution.js"
import { serveMcp } from "./mcpServer.js"
import { resolveSettings, settingsOptions } from "./settings.js"
import { cliStack } from "./stack.js"

/**
 * How long shutdown waits for in-flight calls to answer. Short, because a client that closes our
 * stdin sends SIGTERM 2 s later and SIGKILL 2 s after that (the SDK's `StdioClientTransport`), and
 * the executor still needs its grace period to kill what is left before then.
 *
 * @since 0.1.0
 */
export const mcpDrainTimeoutMs = 500

/** Completes when stdin has ended or closed: the client hung up. */
const stdinEnded = Effect.async<void>((resume) => {
  const done = () => resume(Effect.void)
  if (process.stdin.readableEnded) return done()
  process.stdin.once("end", done).once("close", done)
  return Effect.sync(() => process.stdin.off("end", done).off("close", done))
})

/**
 * Serves the tools on stdio until stdin ends (or the fiber is interrupted), then shuts down.
 *
 * @since 0.1.0
 */
export const serveStdio = Effect.fn("Cli.mcp")(function*(session: ToolSession) {
  yield* serveMcp(new StdioServerTransport(), { session, drainTimeout: mcpDrainTimeoutMs })
  yield* Effect.logDebug("mcp: serving on stdio")
  yield* stdinEnded
  yield* Effect.logDebug("mcp: stdin ended, shutting down")
}, Effect.scoped)

const noBackground = Options.boolean("no-background").pipe(
  Options.withDescription("Do not offer run_in_background on the bash tool")
)

/**
 * The `mcp` subcommand. Calls run in one fixed session `{ id: "mcp", cwd: workdir }` (MCP has no
 * agent session), so background tasks started by a client are visible to its later calls.
 *
 * @since 0.1.0
 */
export const mcpCommand = Command.make("mcp", { settings: settingsOptions, noBackground }, (input) =>
  Effect.gen(function*() {
    const settings = yield* resolveSettings(input.settings)
    yield* serveStdio({ id: "mcp", cwd: settings.workdir }).pipe(
      Effect.provide(cliStack(settings, { background: !input.noBackground }))
    )
  })).pipe(Command.withDescription("Serve bash, task_output, task_list and task_kill as an MCP server on stdio"))
