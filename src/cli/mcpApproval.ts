/**
 * Sandbox escalations approved by the MCP client's user: the server asks through elicitation
 * (`elicitation/create`, a form with no fields, so the client shows the question with accept and
 * decline) when the client declared that capability in `initialize`.
 */
import type { Server } from "@modelcontextprotocol/sdk/server/index.js"
import type { ElicitRequestFormParams, ElicitResult, JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js"
import { InitializeRequestSchema } from "@modelcontextprotocol/sdk/types.js"
import * as Effect from "effect/Effect"
import * as ApprovalCallback from "../layers/ApprovalCallback.js"
import type { Approval } from "../services/Approval.js"
import { runFacts, shownCommand, shownJustification } from "../tool/internal/approvalText.js"
import { networkApprovalTexts } from "../tool/internal/networkApprovalTexts.js"

/**
 * Whether `message` is an `initialize` request whose client can answer a form elicitation (an empty
 * `elicitation: {}` means a form, as the SDK reads it).
 */
export const declaresElicitation = (message: JSONRPCMessage | undefined): boolean => {
  const parsed = InitializeRequestSchema.safeParse(message)
  return parsed.success && parsed.data.params.capabilities.elicitation?.form !== undefined
}

/**
 * The question for one escalation: the command, where and how it would run, the mode it asks for and
 * the model's justification.
 */
export const elicitationMessage = (request: Approval.Request): string =>
  [
    `Allow the bash tool to run this command once with the sandbox widened to "${request.mode}"?`,
    "",
    `Command: ${shownCommand(request)}`,
    ...runFacts(request).map(([label, value]) => `${label}: ${value}`),
    `Justification (from the model): ${shownJustification(request)}`,
    "",
    `Accept runs it once under "${request.mode}"; decline leaves the sandbox as it is and the command does not run.`
  ].join("\n")

/**
 * The `elicitation/create` params for one escalation.
 */
const elicitationParams = (request: Approval.Request): ElicitRequestFormParams => ({
  mode: "form",
  message: elicitationMessage(request),
  requestedSchema: { type: "object", properties: {} }
})

/**
 * The client's answer as an approval: accept allows this call, decline rejects, cancel (dismissed) cancels.
 */
const outcomeOf = (result: ElicitResult): Approval.Outcome => {
  switch (result.action) {
    case "accept":
      return "allowed-once"
    case "decline":
      return "rejected"
    case "cancel":
      return "cancelled"
  }
}

/**
 * Node's timers hold at most this many milliseconds (a longer delay fires at once).
 */
const maxTimerMs = 2 ** 31 - 1

/**
 * Options of {@link make}.
 */
export interface Options {
  /** How long the user may take (by the Clock); no answer by then counts as `cancelled`. */
  readonly timeoutMs: number
}

/**
 * Approval through the client's elicitation. `server` is the connected server (awaited, since the
 * tools are composed before it connects). Accept → `allowed-once`, decline → `rejected`, cancel or no
 * answer within `timeoutMs` → `cancelled` (the request is then cancelled at the client, which withdraws
 * its prompt), an elicitation that fails (an error answer, a broken connection) → `unavailable`.
 */
export const make = (server: Effect.Effect<Server>, options: Options): Approval["Type"] => {
  // The SDK (1.32) ignores a `notifications/cancelled` for request id 0, the id of a connection's
  // first request (modelcontextprotocol/typescript-sdk#2283): that request is a ping, so every
  // elicitation can be withdrawn. The SDK bounds the ping by its request timeout.
  let idZeroTaken = false
  const takeIdZero = (connected: Server) =>
    Effect.sync(() => {
      if (idZeroTaken) return
      idZeroTaken = true
      connected.ping().catch(() => undefined)
    })
  const ask = Effect.fn("McpServer.elicitApproval")(function*(request: Approval.Request) {
    yield* Effect.annotateCurrentSpan({ "sandbox.requested": request.mode })
    const connected = yield* server
    yield* takeIdZero(connected)
    return yield* Effect.tryPromise((signal) =>
      connected.elicitInput(elicitationParams(request), {
        signal,
        // The SDK's own deadline (60 s by default) is only a backstop behind the Clock's.
        timeout: Math.min(options.timeoutMs + 1000, maxTimerMs)
      })
    ).pipe(
      Effect.map(outcomeOf),
      Effect.catchAll((error) =>
        Effect.logWarning("mcp: the escalation could not be asked through elicitation", error.cause).pipe(
          Effect.as<Approval.Outcome>("unavailable")
        )
      )
    )
  })
  const askNetwork = Effect.fn("McpServer.elicitNetworkApproval")(function*(request: Approval.NetworkRequest) {
    const connected = yield* server
    yield* takeIdZero(connected)
    return yield* Effect.tryPromise((signal) =>
      connected.elicitInput(networkElicitationParams(request), { signal, timeout: Math.min(options.timeoutMs + 1000, maxTimerMs) })
    ).pipe(
      Effect.map(networkOutcomeOf),
      Effect.catchAll((error) =>
        Effect.logWarning("mcp: network access could not be asked through elicitation", error.cause).pipe(
          Effect.as<Approval.NetworkOutcome>("unavailable")
        )
      )
    )
  })
  return ApprovalCallback.make((request) => ask(request), { timeoutMs: options.timeoutMs, askNetwork: (request) => askNetwork(request) })
}

/** The `elicitation/create` params for network access: the question, and whether for the session. */
const networkElicitationParams = (request: Approval.NetworkRequest): ElicitRequestFormParams => ({
  mode: "form",
  message: networkApprovalTexts.elicitation(request),
  requestedSchema: {
    type: "object",
    properties: { scope: { type: "string", title: "Allow for", enum: ["once", "session"], default: "once" } },
    required: ["scope"]
  }
})

/** Accept allows this call (or, with scope `session`, the session); decline rejects; cancel cancels. */
const networkOutcomeOf = (result: ElicitResult): Approval.NetworkOutcome =>
  result.action === "accept"
    ? result.content?.scope === "session" ? "allowed-for-session" : "allowed-once"
    : result.action === "decline"
    ? "rejected"
    : "cancelled"
