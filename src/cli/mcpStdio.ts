/**
 * The program of `effect-bash mcp`: the tools as an MCP server on stdio.
 *
 * Shutdown: when the transport closes (stdin ended or failed, stdout failed) or SIGINT/SIGTERM
 * interrupts the program (`NodeRuntime.runMain`), the scopes close in order: wait (bounded) for
 * in-flight calls to answer → close the server → interrupt what is left → release the stack, which
 * kills every process group, foreground and background, and awaits their exit. A signal during that
 * shutdown, or its deadline, escalates every kill to SIGKILL at once (`shutdown.ts`).
 */
import { Effect } from "effect"
import type { ToolSession } from "../services/ToolExecution.js"
import { LineTransport } from "./LineTransport.js"
import { serveMcp } from "./mcpServer.js"
import type { SettingsFlags } from "./settings.js"
import { resolveSettings } from "./settings.js"
import type { Shutdown } from "./shutdown.js"
import { makeShutdown, processSignals } from "./shutdown.js"
import { cliStack } from "./stack.js"

/**
 * How long shutdown waits for in-flight calls to answer. Short, because a client that closes our
 * stdin sends SIGTERM 2 s later and SIGKILL 2 s after that (the SDK's `StdioClientTransport`).
 */
export const mcpDrainTimeoutMs = 500

/**
 * When shutdown escalates to SIGKILL, counted from its start: the process groups get SIGTERM and up
 * to this long to exit (less the drain), so the whole shutdown fits well inside the client's 2 s
 * before its SIGTERM — a SIGKILLed server could kill nothing.
 */
export const mcpShutdownDeadlineMs = 1000

/**
 * Serves the tools on stdio until the transport closes (or the fiber is interrupted), then shuts down.
 */
export const serveStdio = Effect.fn("Cli.mcp")(function*(session: ToolSession, shutdown: Shutdown) {
  const connection = yield* serveMcp(new LineTransport(process.stdin, process.stdout), {
    session,
    drainTimeout: mcpDrainTimeoutMs
  })
  // Added last, so it runs first when the scope closes, whatever closes it.
  yield* Effect.addFinalizer(() => shutdown.begin)
  yield* Effect.logDebug("mcp: serving on stdio")
  yield* connection.closed
  yield* Effect.logDebug("mcp: the transport closed, shutting down")
}, Effect.scoped)

/**
 * The `mcp` subcommand's program. Calls run in one fixed session `{ id: "mcp", cwd: workdir }` (MCP
 * has no agent session), so background tasks started by a client are visible to its later calls.
 */
export const mcp = (input: { readonly settings: SettingsFlags; readonly noBackground: boolean }) =>
  Effect.gen(function*() {
    const settings = yield* resolveSettings(input.settings)
    // Outlives the stack, so the deadline keeps running while the stack is released.
    const shutdown = yield* makeShutdown({ signals: processSignals, deadlineMs: mcpShutdownDeadlineMs })
    yield* serveStdio({ id: "mcp", cwd: settings.workdir }, shutdown).pipe(
      Effect.provide(cliStack(settings, { background: !input.noBackground, escalation: shutdown.escalation }))
    )
  }).pipe(Effect.scoped)
