/**
 * When the tools cannot be composed (`--container-image` without docker-modem, a sandbox that cannot
 * start, …), `mcp` still answers its client: the client's first request gets a JSON-RPC error with
 * the reason, which a client shows (`MCP error -32603: …`), where an exit alone shows it only
 * `Connection closed`. The process then exits as before, the reason on stderr too.
 */
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js"
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js"
import { ErrorCode } from "@modelcontextprotocol/sdk/types.js"
import * as Effect from "effect/Effect"

const isRequest = (message: JSONRPCMessage): message is JSONRPCMessage & { readonly id: string | number } =>
  "method" in message && "id" in message

/**
 * Answers the first request arriving on `transport` (started here) with `effect-bash: <reason>`, or
 * returns when the client's input ends first.
 */
export const refuseClient = Effect.fn("Cli.mcp.refuseClient")(function*(
  transport: Transport,
  inputEnded: Effect.Effect<void>,
  reason: string
) {
  const request = Effect.async<string | number>((resume) => {
    transport.onmessage = (message) => {
      if (isRequest(message)) resume(Effect.succeed(message.id))
    }
  })
  yield* Effect.promise(() => transport.start())
  const id = yield* Effect.raceFirst(request, Effect.as(inputEnded, undefined))
  if (id === undefined) return
  const reply = { jsonrpc: "2.0" as const, id, error: { code: ErrorCode.InternalError, message: `effect-bash: ${reason}` } }
  yield* Effect.promise(() => transport.send(reply).catch(() => undefined))
})
