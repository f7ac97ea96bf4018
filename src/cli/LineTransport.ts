/**
 * The MCP stdio transport: one JSON-RPC message per line, in from a readable (stdin), out to a
 * writable (stdout). It replaces the SDK's `StdioServerTransport`, which after one line over its
 * 10 MiB read limit stops reading for good without reporting a close (the server then answers
 * nothing and never exits), ignores the end of stdin, and answers no malformed line.
 *
 * Here a line over the limit is dropped unread and answered, a malformed line is answered (see
 * `jsonRpcLine.ts`), an id a JavaScript number cannot hold exactly is answered with its text as
 * written (see `rawIds.ts`), and the transport closes — `onclose`, once — when its input fails, when
 * its output fails (the client is gone), or on `close()`. When its input ends (or closes), a last line
 * without a newline is read too, and then `oninputend` is called while the output stays open, so calls
 * in flight can still be answered; without an `oninputend` the transport closes.
 */
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js"
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js"
import type { Readable, Writable } from "node:stream"
import type { ErrorReply, LineVerdict } from "./jsonRpcLine.js"
import { judgeLine, judgeOversizeLine } from "./jsonRpcLine.js"
import { RawIds } from "./rawIds.js"

/**
 * The read limit per line, as in the SDK.
 */
const defaultMaxLineBytes = 10 * 1024 * 1024

// How much of a dropped line is kept to find its id.
const edgeBytes = 512
const newline = 0x0a

/**
 * A line-delimited JSON-RPC transport over a pair of Node streams.
 */
export class LineTransport implements Transport {
  onclose?: () => void
  onerror?: (error: Error) => void
  onmessage?: (message: JSONRPCMessage) => void
  /** The input has ended: nothing more will arrive, and the output is still open. */
  oninputend?: () => void

  private pieces: Array<Buffer> = []
  private size = 0
  /** Set while the rest of an over-long line is skipped. */
  private dropping: { head: Buffer; tail: Buffer } | undefined
  private closed = false
  private inputEnded = false
  private readonly ids = new RawIds()

  constructor(
    private readonly input: Readable,
    private readonly output: Writable,
    private readonly maxLineBytes: number = defaultMaxLineBytes
  ) {}

  async start(): Promise<void> {
    this.input.on("data", this.onData)
    this.input.on("end", this.onEnd)
    this.input.on("close", this.onEnd)
    this.input.on("error", this.onStreamError)
    this.output.on("error", this.onStreamError)
    // The input may have ended before the server connected.
    if (this.input.readableEnded || this.input.destroyed) this.onEnd()
  }

  send(message: JSONRPCMessage | ErrorReply): Promise<void> {
    return this.write(this.ids.serialize(message))
  }

  async close(): Promise<void> {
    if (this.closed) return
    this.closed = true
    this.stopReading()
    // Keep listening for output errors: a late write to a gone client must not crash the host.
    this.onclose?.()
  }

  private stopReading(): void {
    this.input.off("data", this.onData)
    this.input.off("end", this.onEnd)
    this.input.off("close", this.onEnd)
    this.input.off("error", this.onStreamError)
    this.input.pause()
    this.pieces = []
    this.dropping = undefined
  }

  private write(line: string): Promise<void> {
    if (this.closed) return Promise.reject(new Error("the transport is closed"))
    return new Promise((resolve, reject) => {
      this.output.write(`${line}\n`, (error) => (error ? reject(error) : resolve()))
    })
  }

  private readonly onData = (chunk: Buffer | string): void => {
    const bytes = typeof chunk === "string" ? Buffer.from(chunk) : chunk
    let start = 0
    while (!this.closed) {
      const end = bytes.indexOf(newline, start)
      this.take(bytes.subarray(start, end === -1 ? bytes.length : end))
      if (end === -1) return
      this.endLine()
      start = end + 1
    }
  }

  // Adds part of the current line, switching to dropping it once it outgrows the limit.
  private take(part: Buffer): void {
    if (part.length === 0) return
    if (this.dropping !== undefined) {
      this.dropping.tail = lastBytes(Buffer.concat([this.dropping.tail, part]))
      return
    }
    if (this.size + part.length <= this.maxLineBytes) {
      this.pieces.push(part)
      this.size += part.length
      return
    }
    const line = Buffer.concat([...this.pieces, part])
    this.dropping = { head: Buffer.from(line.subarray(0, edgeBytes)), tail: lastBytes(line) }
    this.pieces = []
    this.size = 0
  }

  private endLine(): void {
    if (this.dropping !== undefined) {
      const { head, tail } = this.dropping
      this.dropping = undefined
      this.act(judgeOversizeLine(head.toString("utf8"), tail.toString("utf8"), this.maxLineBytes, this.ids.admit))
      return
    }
    const line = Buffer.concat(this.pieces).toString("utf8").replace(/\r$/, "")
    this.pieces = []
    this.size = 0
    for (const verdict of judgeLine(line, this.ids.admit)) this.act(verdict)
  }

  private act(verdict: LineVerdict): void {
    switch (verdict._tag) {
      case "Message":
        this.onmessage?.(verdict.message)
        return
      case "Reply":
        this.onerror?.(new Error(verdict.problem))
        this.send(verdict.reply).catch((error: unknown) => this.onStreamError(error))
        return
      case "Ignore":
        this.onerror?.(new Error(verdict.problem))
    }
  }

  private readonly onEnd = (): void => {
    if (this.closed || this.inputEnded) return
    this.inputEnded = true
    if (this.size > 0 || this.dropping !== undefined) this.endLine()
    this.stopReading()
    if (this.closed) return
    if (this.oninputend === undefined) void this.close()
    else this.oninputend()
  }

  private readonly onStreamError = (error: unknown): void => {
    if (this.closed) return
    this.onerror?.(error instanceof Error ? error : new Error(String(error)))
    void this.close()
  }
}

const lastBytes = (bytes: Buffer): Buffer =>
  bytes.length <= edgeBytes ? bytes : Buffer.from(bytes.subarray(bytes.length - edgeBytes))
