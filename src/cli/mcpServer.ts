/**
 * The composed tools as an MCP server, over any MCP transport (stdio in the CLI, in-memory in tests).
 *
 * Built on the official SDK's low-level `Server`, not `@effect/ai`'s `McpServer`: that one (0.37)
 * JSON-stringifies every tool result, returns failures as JSON with `isError: false`, turns defects
 * into JSON-RPC errors with code 0, stops reading stdin after one malformed line and never answers a
 * request with a string id — unfit for a model-facing bash tool. Here a result is the tool's plain
 * text, a tool error is `isError: true` with our exact message, unknown methods get -32601 (from
 * the SDK's `Protocol`), and a `tools/call` with invalid params gets -32602 with our message (the
 * SDK answers those with -32603 and a dump of its schema errors).
 */
import { Server } from "@modelcontextprotocol/sdk/server/index.js"
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js"
import type { CallToolResult, JSONRPCRequest, ServerNotification, Tool } from "@modelcontextprotocol/sdk/types.js"
import { ErrorCode, ListToolsRequestSchema } from "@modelcontextprotocol/sdk/types.js"
import type * as Duration from "effect/Duration"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as FiberSet from "effect/FiberSet"
import * as Option from "effect/Option"
import * as Runtime from "effect/Runtime"
import { AgentTools } from "../services/AgentTools.js"
import { echoValue } from "../services/internal/requestChecks.js"
import { abortOnSignal } from "../tool/abortable.js"
import type { ToolSession } from "../services/ToolExecution.js"
import { judgeMessage } from "./jsonRpcLine.js"
import { SandboxSessions, sandboxPolicyContext } from "../services/SandboxSessions.js"
import { packageVersion } from "./version.js"

/**
 * How {@link serveMcp} runs.
 */
export interface McpServeOptions {
  /**
   * The session every call runs in. MCP has no agent session, so one fixed session keeps background
   * task ownership consistent across the calls of a connection.
   */
  readonly session: ToolSession
  /** How long closing waits for in-flight calls to answer before interrupting them. */
  readonly drainTimeout: Duration.DurationInput
  /**
   * Called when the client sends `initialized`: set before the transport starts, so a notification
   * that arrives with the first messages is not missed.
   */
  readonly onInitialized?: () => void
}

/**
 * What the policy text's names mean here: the policy text is the reference harness's, word for word,
 * and an MCP client's model has never met that harness. Sent just before the policy.
 */
const sandboxPolicyGloss = {
  name: "sandbox:policy-gloss",
  order: sandboxPolicyContext.order - 1,
  text: "In this server, the DSH file sandbox is effect-bash's bubblewrap sandbox around the commands of the bash tool, and the DSH file policy is the mode it enforces on the files they may modify."
} as const

const toMcpTool = (tool: AgentTools.Descriptor): Tool => ({
  name: tool.name,
  description: tool.description,
  // Clients reject the whole list when a schema lacks `type: "object"`, even for a tool without parameters.
  inputSchema: { ...tool.parameters, type: "object" } as Tool["inputSchema"]
})

// Completion notices of finished background tasks follow the result as text items of their own.
const toMcpResult = (result: AgentTools.Result, notices: ReadonlyArray<string>): CallToolResult => {
  const content = [result.isError ? result.message : result.text, ...notices].map((text) => ({
    type: "text" as const,
    text
  }))
  return result.isError ? { content, isError: true } : { content }
}

/**
 * A served connection.
 */
export interface McpConnection {
  readonly server: Server
  /** Completes when the transport has closed, for any reason (the client hung up, a stream failed). */
  readonly closed: Effect.Effect<void>
}

/** A JSON-RPC error the SDK answers with exactly this code and message (its `McpError` prefixes the message). */
const rpcError = (code: number, message: string) => Object.assign(new Error(message), { code })

const isRecord = (value: unknown): value is Readonly<Record<string, unknown>> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

/** The params of a `tools/call`, or the -32602 error naming what is wrong with them. */
const callParams = (params: unknown) => {
  if (!isRecord(params)) throw rpcError(ErrorCode.InvalidParams, `invalid params: expected an object, got ${echoValue(params)}`)
  const { arguments: args, name } = params
  if (typeof name !== "string" || name === "") {
    throw rpcError(ErrorCode.InvalidParams, `invalid name: expected a non-empty string, got ${echoValue(name)}`)
  }
  if (args !== undefined && !isRecord(args)) {
    throw rpcError(ErrorCode.InvalidParams, `invalid arguments: expected an object, got ${echoValue(args)}`)
  }
  return { name, args: args ?? {} }
}

/**
 * The call's progress reporter when the request asked for progress (`_meta.progressToken`): each
 * update is a `notifications/progress` with the next `progress` count and the new output as `message`.
 * A notification that cannot be sent is logged, never fails the call.
 */
const progressFor = (
  token: unknown,
  send: (notification: ServerNotification) => Promise<void>
): Partial<Pick<AgentTools.CallContext, "onProgress">> => {
  if (typeof token !== "string" && typeof token !== "number") return {}
  const progressToken = token
  let progress = 0
  return {
    onProgress: (message) =>
      Effect.tryPromise(() =>
        send({ method: "notifications/progress", params: { progressToken, progress: ++progress, message } })
      ).pipe(Effect.catchAll((error) => Effect.logWarning("mcp: progress notification not sent", error.cause)))
  }
}

const afterPendingCallbacks = Effect.async<void>((resume) => {
  const immediate = setImmediate(() => resume(Effect.void))
  return Effect.sync(() => clearImmediate(immediate))
})

/**
 * Connects an MCP server exposing {@link AgentTools} to `transport`, for the lifetime of the scope.
 * Each call runs as a fiber in the scope, interrupted when the request is cancelled (it ends as
 * `command aborted`); a request with
 * `_meta.progressToken` gets `notifications/progress` carrying the command's new output while it runs
 * (see `AgentTools.CallContext.onProgress`). Closing the scope waits up to `drainTimeout` for
 * in-flight calls to answer, then aborts what is left (which kills their process groups) and waits up
 * to `drainTimeout` again for each to answer `command aborted`, then closes the server, which
 * interrupts any call still running — so closing leaves no call running. The scope's owner closes it
 * when the connection's `closed` completes.
 */
export const serveMcp = Effect.fn("McpServer.serve")(function*(transport: Transport, options: McpServeOptions) {
  const tools = yield* AgentTools
  const runtime = yield* Effect.runtime<never>()
  const calls = yield* FiberSet.make<CallToolResult>()
  const runCall = yield* FiberSet.runtimePromise(calls)<never>()
  // Fired when closing stops the calls the drain left: each then answers `command aborted`.
  const stopping = new AbortController()
  // MCP instructions are fixed per connection: the sandbox policy is the one in force when it opens.
  const sessions = yield* Effect.serviceOption(SandboxSessions)
  const policy = Option.flatMapNullable(sessions, (live) => live.policyText(options.session))
  const instructions = [
    ...tools.promptSections,
    ...Option.match(policy, {
      onNone: () => [],
      onSome: (text) => [sandboxPolicyGloss, { ...sandboxPolicyContext, text }]
    })
  ]
    .sort((a, b) => a.order - b.order)
    .map((section) => section.text)
    .join("\n\n")

  const server = new Server(
    { name: "effect-bash", version: packageVersion },
    { capabilities: { tools: {} }, ...(instructions ? { instructions } : {}) }
  )
  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: tools.tools.map(toMcpTool) }))
  // `tools/call` is served as the fallback, not through `setRequestHandler`: the SDK's handler wrapper
  // validates params with its own schema first and answers a failure with -32603 and a zod dump.
  server.fallbackRequestHandler = async (request: JSONRPCRequest, extra) => {
    if (request.method !== "tools/call") throw rpcError(ErrorCode.MethodNotFound, "Method not found")
    const { args, name } = callParams(request.params)
    const call = tools.callUnknown(name, args, {
      callId: `mcp-${String(extra.requestId)}`,
      session: options.session,
      ...progressFor(extra._meta?.progressToken, extra.sendNotification)
    })
    return runCall(
      abortOnSignal(abortOnSignal(call, extra.signal), stopping.signal).pipe(
        Effect.zip(tools.takeNotices(options.session.id)),
        Effect.map(([result, notices]) => toMcpResult(result, notices)),
        Effect.withSpan("McpServer.callTool", { attributes: { tool: name } })
      )
    )
  }
  server.onerror = (error) =>
    Runtime.runFork(runtime)(Effect.logWarning(`mcp: ${error.message}`))
  // Seen before the SDK's dispatch, which only logs a message that is no valid request: answer it,
  // so a request with an id never waits forever. (The stdio transport answers such lines itself.)
  transport.onmessage = (message) => {
    for (const verdict of judgeMessage(message)) {
      if (verdict._tag === "Reply") transport.send(verdict.reply as never).catch(server.onerror)
    }
  }
  const closed = yield* Deferred.make<void>()
  server.onclose = () => Deferred.unsafeDone(closed, Effect.void)
  if (options.onInitialized !== undefined) server.oninitialized = options.onInitialized

  // A release runs uninterruptibly; a bounded wait there must be interruptible to time out.
  const callsDone = FiberSet.awaitEmpty(calls).pipe(Effect.interruptible, Effect.timeout(options.drainTimeout), Effect.ignore)
  const drainThenClose = callsDone.pipe(
    Effect.andThen(Effect.sync(() => stopping.abort())),
    Effect.andThen(callsDone),
    // The SDK sends an answer a few promise callbacks after its handler settled: all of them run first.
    Effect.andThen(afterPendingCallbacks),
    Effect.andThen(Effect.promise(() => server.close()))
  )
  yield* Effect.acquireRelease(
    Effect.promise(() => server.connect(transport)),
    // In a fiber of its own, joined to the end: an interruption of the fiber closing the scope (a
    // SIGTERM during the drain) would end the drain's interruptible waits at once, and the calls left
    // would then be interrupted with the scope, unanswered or answered with a defect, not aborted.
    () => Effect.forkDaemon(drainThenClose).pipe(Effect.flatMap(Fiber.join))
  )
  const connection: McpConnection = { server, closed: Deferred.await(closed) }
  return connection
})
