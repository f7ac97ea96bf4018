/**
 * The program of `effect-bash mcp`: the tools as an MCP server on stdio.
 *
 * Shutdown: when stdin ends, when the transport closes (stdin or stdout failed) or when SIGINT/SIGTERM
 * interrupts the program (`NodeRuntime.runMain`), the scopes close in order: wait (bounded) for
 * in-flight calls to answer → abort the rest, each answered (bounded) → close the server → release
 * the stack, which kills every process group, foreground and background, and awaits their exit. A
 * signal during that shutdown, or its deadline, escalates every kill to SIGKILL at once (`shutdown.ts`).
 */
import type { Server } from "@modelcontextprotocol/sdk/server/index.js"
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import { startHelpersAfter } from "../layers/startHelpersAfter.js"
import { Approval } from "../services/Approval.js"
import type { ToolSession } from "../services/ToolExecution.js"
import { errorMessage } from "./errorMessage.js"
import { HeldTransport } from "./HeldTransport.js"
import { LineTransport } from "./LineTransport.js"
import * as McpApproval from "./mcpApproval.js"
import { serveMcp } from "./mcpServer.js"
import type { SettingsFlags } from "./settings.js"
import { refuseClient } from "./refuseClient.js"
import { resolveSettings } from "./settings.js"
import type { Shutdown } from "./shutdown.js"
import { makeShutdown, processSignals } from "./shutdown.js"
import { cliStack } from "./stack.js"

/**
 * How long shutdown waits for in-flight calls to answer. Short, because a client that closes our
 * stdin sends SIGTERM 2 s later and SIGKILL 2 s after that (the SDK's `StdioClientTransport`).
 */
const mcpDrainTimeoutMs = 500

/**
 * When shutdown escalates to SIGKILL, counted from its start: the process groups get SIGTERM and up
 * to this long to exit (less the drain), so the whole shutdown fits well inside the client's 2 s
 * before its SIGTERM — a SIGKILLed server could kill nothing.
 */
const mcpShutdownDeadlineMs = 1000

/**
 * Serves the tools on `transport` (stdio) until stdin has ended (`inputEnded`) or the transport
 * closes (or the fiber is interrupted), then shuts down. `connected` receives the server once it is
 * connected (the elicitation approval asks through it).
 */
const serveStdio = Effect.fn("Cli.mcp")(function*(
  transport: Transport,
  inputEnded: Effect.Effect<void>,
  session: ToolSession,
  shutdown: Shutdown,
  connected: Deferred.Deferred<Server>,
  initialized: Deferred.Deferred<void>
) {
  const connection = yield* serveMcp(transport, {
    session,
    drainTimeout: mcpDrainTimeoutMs,
    onInitialized: () => Deferred.unsafeDone(initialized, Exit.void)
  })
  yield* Deferred.succeed(connected, connection.server)
  // Added last, so it runs first when the scope closes, whatever closes it.
  yield* Effect.addFinalizer(() => shutdown.begin)
  yield* Effect.logDebug("mcp: serving on stdio")
  yield* Effect.race(connection.closed, inputEnded)
  yield* Effect.logDebug("mcp: stdin ended or the transport closed, shutting down")
}, Effect.scoped)

/**
 * The `mcp` subcommand's program. Calls run in one fixed session `{ id: "mcp", cwd: workdir }` (MCP
 * has no agent session), so background tasks started by a client are visible to its later calls.
 * The spawner's helper processes start once the client has sent `initialized` (or with the first
 * spawn: a call, or the sandbox's runner probe as the stack is built), so without a sandbox
 * `initialize` is answered before they are forked.
 *
 * Under a sandbox, the tools are composed once the client's first message has arrived: when it is an
 * `initialize` declaring elicitation, escalations are approved by the client's user (`mcpApproval.ts`)
 * and the tool offers them; otherwise no approval is composed and the tool offers none. So what
 * `tools/list` shows is what this client can be granted.
 *
 * When the tools cannot be composed, the client's first request is answered with the reason
 * (`refuseClient.ts`) before the program fails with it.
 */
export const mcp = (
  input: { readonly settings: SettingsFlags; readonly noBackground: boolean; readonly terminals: boolean }
) =>
  Effect.gen(function*() {
    const settings = yield* resolveSettings(input.settings)
    // Outlives the stack, so the deadline keeps running while the stack is released.
    const shutdown = yield* makeShutdown({ signals: processSignals, deadlineMs: mcpShutdownDeadlineMs })
    const connected = yield* Deferred.make<Server>()
    const initialized = yield* Deferred.make<void>()
    const stdio = new LineTransport(process.stdin, process.stdout)
    // The client's goodbye: stdout stays open while the calls in flight drain.
    const inputEnded = yield* Deferred.make<void>()
    stdio.oninputend = () => Deferred.unsafeDone(inputEnded, Exit.void)
    const { approval, transport } = settings.approval === undefined
      ? { transport: stdio, approval: undefined }
      : yield* approvalForClient(stdio, Deferred.await(inputEnded), Deferred.await(connected), settings.approval)
    const session = { id: "mcp", cwd: settings.workdir }
    yield* serveStdio(transport, Deferred.await(inputEnded), session, shutdown, connected, initialized).pipe(
      Effect.provide(
        cliStack(settings, {
          background: !input.noBackground,
          terminals: input.terminals,
          escalation: shutdown.escalation,
          ...(approval === undefined ? {} : { approval })
        }).pipe(
          startHelpersAfter(Deferred.await(initialized)),
          Layer.tapError((error) => refuseClient(transport, Deferred.await(inputEnded), errorMessage(error)))
        )
      )
    )
  }).pipe(Effect.scoped)

/**
 * Under a sandbox: reads the client's first message (held for the server) and, when it is an
 * `initialize` declaring elicitation, the approval that asks the client's user through `server`.
 * Stdin that ends before any message has none.
 */
const approvalForClient = Effect.fn("Cli.mcp.approvalForClient")(function*(
  stdio: Transport,
  inputEnded: Effect.Effect<void>,
  server: Effect.Effect<Server>,
  options: McpApproval.Options
) {
  const transport = new HeldTransport(stdio)
  const first = yield* Effect.race(transport.firstMessage, Effect.as(inputEnded, undefined))
  const elicitation = McpApproval.declaresElicitation(first)
  yield* Effect.annotateCurrentSpan({ "mcp.elicitation": elicitation })
  yield* Effect.logDebug(`mcp: escalation approval through elicitation: ${elicitation ? "yes" : "no"}`)
  const approval = elicitation ? Layer.succeed(Approval, McpApproval.make(server, options)) : undefined
  return { transport, approval }
})
