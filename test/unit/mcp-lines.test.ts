/**
 * The MCP stdio line protocol without a process: `judgeLine` / `judgeOversizeLine` and the
 * `LineTransport` over in-memory streams (line splitting across chunks, over-long lines, closing).
 */
import { describe, expect, it } from "@effect/vitest"
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js"
import { PassThrough } from "node:stream"
import { judgeLine, judgeOversizeLine } from "../../src/cli/jsonRpcLine.js"
import { LineTransport } from "../../src/cli/LineTransport.js"

const replyOf = (line: string) => judgeLine(line).map((verdict) => (verdict._tag === "Reply" ? verdict.reply : verdict._tag))

describe("judgeLine", () => {
  it("passes a valid message through, and ignores a blank line", () => {
    expect(judgeLine(`{"jsonrpc":"2.0","id":1,"method":"ping"}`)).toEqual([
      { _tag: "Message", message: { jsonrpc: "2.0", id: 1, method: "ping" } }
    ])
    expect(judgeLine("   ")).toEqual([])
  })

  it("answers text that is not JSON with -32700 and id null", () => {
    expect(replyOf(`{"jsonrpc":"2.0","id":1`)).toEqual([
      { jsonrpc: "2.0", id: null, error: { code: -32700, message: "Parse error: the line is not valid JSON" } }
    ])
  })

  it("answers an invalid request with -32600, naming the problem, with its id when it can be read", () => {
    expect(replyOf(`{"jsonrpc":"1.0","id":"a","method":"ping"}`)).toEqual([
      { jsonrpc: "2.0", id: "a", error: { code: -32600, message: `Invalid Request: "jsonrpc" must be "2.0"` } }
    ])
    expect(replyOf(`{"jsonrpc":"2.0","id":{"x":1},"method":"ping"}`)).toEqual([
      { jsonrpc: "2.0", id: null, error: { code: -32600, message: `Invalid Request: "id" must be a string or a number` } }
    ])
    expect(replyOf(`{"jsonrpc":"2.0","id":2,"method":"ping","params":[1]}`)).toEqual([
      { jsonrpc: "2.0", id: 2, error: { code: -32600, message: `Invalid Request: "params" must be an object` } }
    ])
    expect(replyOf(`{"jsonrpc":"2.0","id":1e400,"method":"ping"}`)).toMatchObject([{ id: null }])
    // Without a transport that keeps its text (LineTransport does), such an id is refused by name.
    expect(replyOf(`{"jsonrpc":"2.0","id":-0.5,"method":"ping"}`)).toEqual([{
      jsonrpc: "2.0",
      id: -0.5,
      error: {
        code: -32600,
        message: `Invalid Request: "id" -0.5 is not taken here: use a string or an integer of at most 2^53-1 in magnitude`
      }
    }])
    expect(replyOf("7")).toMatchObject([{ id: null, error: { message: "Invalid Request: expected a JSON object" } }])
  })

  it("answers each request of a batch, and a batch without one once", () => {
    expect(replyOf(`[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","method":"n"},{"jsonrpc":"2.0","id":"b","method":"ping"}]`))
      .toMatchObject([{ id: 1, error: { code: -32600 } }, { id: "b", error: { code: -32600 } }])
    expect(replyOf("[]")).toMatchObject([{ id: null, error: { message: "Invalid Request: batches are not supported" } }])
  })

  it("does not answer a malformed response", () => {
    expect(replyOf(`{"jsonrpc":"2.0","id":1,"result":5}`)).toEqual(["Ignore"])
  })
})

describe("judgeOversizeLine", () => {
  const answerId = (head: string, tail: string) => {
    const verdict = judgeOversizeLine(head, tail, 100)
    return verdict._tag === "Reply" ? verdict.reply.id : "no reply"
  }
  it("finds the id among the first keys or as the last key, else answers id null", () => {
    expect(answerId(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"x":"aaa`, `aaa"}}`)).toBe(7)
    expect(answerId(`{"id":"s-1","jsonrpc":"2.0","method":"x"`, `aaa"}}`)).toBe("s-1")
    expect(answerId(`{"method":"tools/call","params":{"id":3,"x":"aaa`, `aaa"}},"jsonrpc":"2.0","id":"last"}`)).toBe("last")
    expect(answerId(`{"method":"tools/call","params":{"x":"aaa`, `aaa","id":4}}`)).toBe(null)
    expect(judgeOversizeLine("{", "}", 100)).toMatchObject({
      reply: { error: { code: -32600, message: "Invalid Request: the message is longer than 100 bytes" } }
    })
  })
})

/** A transport over in-memory streams, collecting what it delivers and writes. */
const connected = async (maxLineBytes: number) => {
  const input = new PassThrough()
  const output = new PassThrough()
  const transport = new LineTransport(input, output, maxLineBytes)
  const messages: Array<JSONRPCMessage> = []
  const written: Array<unknown> = []
  const lines: Array<string> = []
  let closed = 0
  transport.onmessage = (message) => messages.push(message)
  transport.onclose = () => closed++
  transport.onerror = () => undefined
  output.setEncoding("utf8").on("data", (chunk: string) =>
    chunk.split("\n").filter(Boolean).forEach((line) => {
      lines.push(line)
      written.push(JSON.parse(line))
    }))
  await transport.start()
  const settle = () => new Promise((resolve) => setImmediate(resolve))
  return { input, output, transport, messages, written, lines, closes: () => closed, settle }
}

describe("LineTransport", () => {
  it("joins a line split across chunks and splits several lines in one chunk (\\r\\n too)", async () => {
    const { input, messages, settle } = await connected(1_000)
    input.write(`{"jsonrpc":"2.0","id":1,`)
    input.write(`"method":"ping"}\r\n{"jsonrpc":"2.0","id":2,"method":"ping"}\n{"jsonrpc":"2.0",`)
    input.write(`"id":3,"method":"ping"}\n`)
    await settle()
    expect(messages.map((message) => (message as { id: number }).id)).toEqual([1, 2, 3])
  })

  it("drops a line over the limit unread, answers it, and goes on with the next line", async () => {
    const { input, messages, settle, written } = await connected(64)
    input.write(`{"method":"tools/call","params":{"text":"${"x".repeat(50)}`)
    input.write(`${"x".repeat(500)}"},"jsonrpc":"2.0","id":9}\n{"jsonrpc":"2.0","id":10,"method":"ping"}\n`)
    await settle()
    expect(written).toEqual([
      { jsonrpc: "2.0", id: 9, error: { code: -32600, message: "Invalid Request: the message is longer than 64 bytes" } }
    ])
    expect(messages).toEqual([{ jsonrpc: "2.0", id: 10, method: "ping" }])
  })

  it("answers a number id JavaScript cannot hold exactly (1e308, 2^53+1, -0.5, 1e400) with its text as written", async () => {
    const { input, lines, messages, settle, transport } = await connected(1_000)
    // An echo server: each request is answered with the id the transport delivered.
    transport.onmessage = (message) => {
      messages.push(message)
      if ("id" in message && message.id !== undefined) void transport.send({ jsonrpc: "2.0", id: message.id, result: {} })
    }
    const ids = ["1e308", "9007199254740993", "-0.5", "1e400", "-12345678901234567890.5"]
    for (const id of ids) input.write(`{"jsonrpc":"2.0","id":${id},"method":"ping"}\n`)
    input.write(`{"jsonrpc":"2.0","id":7,"method":"ping"}\n`)
    await settle()
    expect(messages.map((message) => "method" in message && message.method)).toEqual([...ids, "7"].map(() => "ping"))
    expect(lines).toEqual([
      ...ids.map((id) => `{"id":${id},"jsonrpc":"2.0","result":{}}`),
      `{"jsonrpc":"2.0","id":7,"result":{}}`
    ])
  })

  it("keeps the text of such an id in the answer to an invalid or over-long request", async () => {
    const { input, lines, settle } = await connected(64)
    input.write(`{"jsonrpc":"2.0","id":9007199254740993,"method":7}\n`)
    input.write(`{"jsonrpc":"2.0","id":-0.5,"method":"tools/call","params":{"text":"${"x".repeat(100)}"}}\n`)
    await settle()
    expect(lines).toEqual([
      `{"id":9007199254740993,"jsonrpc":"2.0","error":{"code":-32600,"message":"Invalid Request: \\"method\\" must be a string"}}`,
      `{"id":-0.5,"jsonrpc":"2.0","error":{"code":-32600,"message":"Invalid Request: the message is longer than 64 bytes"}}`
    ])
  })

  it("closes once when its input ends, and a later send fails instead of writing", async () => {
    const { closes, input, settle, transport } = await connected(1_000)
    input.end()
    await settle()
    await transport.close()
    expect(closes()).toBe(1)
    await expect(transport.send({ jsonrpc: "2.0", id: 1, result: {} })).rejects.toThrow("the transport is closed")
  })

  it("closes when its input ends, after reading a last line that has no newline", async () => {
    const { closes, input, messages, settle } = await connected(1_000)
    input.end(`{"jsonrpc":"2.0","id":1,"method":"ping"}`)
    await settle()
    expect(messages).toEqual([{ jsonrpc: "2.0", id: 1, method: "ping" }])
    expect(closes()).toBe(1)
  })

  it("with oninputend, the input's end is reported once and the output stays open for answers", async () => {
    const { closes, input, lines, messages, settle, transport } = await connected(1_000)
    let ended = 0
    transport.oninputend = () => ended++
    input.write(`{"jsonrpc":"2.0","id":1,"method":"ping"}\n`)
    input.end(`{"jsonrpc":"2.0","id":2,"method":"ping"}`)
    await settle()
    expect(messages.map((message) => (message as { id: number }).id)).toEqual([1, 2])
    expect(ended).toBe(1)
    expect(closes()).toBe(0)
    await transport.send({ jsonrpc: "2.0", id: 2, result: {} })
    await settle()
    expect(lines).toEqual([`{"jsonrpc":"2.0","id":2,"result":{}}`])
    await transport.close()
    expect(closes()).toBe(1)
  })

  it("closes when its output fails (the client stopped reading)", async () => {
    const { closes, output, settle } = await connected(1_000)
    output.destroy(new Error("EPIPE"))
    await settle()
    expect(closes()).toBe(1)
  })
})
