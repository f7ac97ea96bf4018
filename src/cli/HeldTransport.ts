/**
 * A transport started before its server exists: it holds what arrives (messages, errors, the close)
 * until a server connects, then hands it on in order. The MCP server reads the client's first
 * message this way — its `initialize` says whether the client can ask its user (elicitation) —
 * before the tools are composed.
 */
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js"
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as FiberId from "effect/FiberId"

type Held =
  | { readonly _tag: "message"; readonly message: JSONRPCMessage }
  | { readonly _tag: "error"; readonly error: Error }
  | { readonly _tag: "close" }

/**
 * Wraps `inner`, which it starts at once ({@link HeldTransport.start} is then the connecting
 * server's cue to receive what was held).
 */
export class HeldTransport implements Transport {
  onclose?: () => void
  onerror?: (error: Error) => void
  onmessage?: (message: JSONRPCMessage) => void

  /** Until a server connects, what arrived; afterwards undefined and events pass straight on. */
  private held: Array<Held> | undefined = []
  /** The first message, or undefined when the close came first; the first to arrive wins. */
  private readonly first = Deferred.unsafeMake<JSONRPCMessage | undefined>(FiberId.none)

  constructor(private readonly inner: Transport) {
    inner.onmessage = (message) => this.arrive({ _tag: "message", message })
    inner.onerror = (error) => this.arrive({ _tag: "error", error })
    inner.onclose = () => this.arrive({ _tag: "close" })
  }

  /**
   * Starts the inner transport and waits for the first message, or for the close (then undefined).
   * A stdio transport whose input ended does not close: its owner races this wait with that end.
   */
  readonly firstMessage: Effect.Effect<JSONRPCMessage | undefined> = Effect.suspend(() =>
    Effect.zipRight(Effect.promise(() => this.inner.start()), Deferred.await(this.first))
  ).pipe(Effect.withSpan("HeldTransport.firstMessage"))

  /** The connecting server's start: everything held so far is delivered now, in order. */
  async start(): Promise<void> {
    const held = this.held ?? []
    this.held = undefined
    for (const event of held) this.deliver(event)
  }

  send(message: JSONRPCMessage, options?: Parameters<Transport["send"]>[1]): Promise<void> {
    return this.inner.send(message, options)
  }

  close(): Promise<void> {
    return this.inner.close()
  }

  private arrive(event: Held): void {
    if (event._tag !== "error") {
      Deferred.unsafeDone(this.first, Effect.succeed(event._tag === "message" ? event.message : undefined))
    }
    if (this.held !== undefined) this.held.push(event)
    else this.deliver(event)
  }

  private deliver(event: Held): void {
    switch (event._tag) {
      case "message":
        return this.onmessage?.(event.message)
      case "error":
        return this.onerror?.(event.error)
      case "close":
        return this.onclose?.()
    }
  }
}
