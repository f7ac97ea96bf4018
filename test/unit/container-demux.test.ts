/**
 * The Docker Engine's exec stream, as the container executor reads it: frames split and joined
 * across chunks, each on its stream, and every byte that arrived delivered — the payload of a frame
 * the connection cut short included.
 */
import { Effect } from "effect"
import { Duplex } from "node:stream"
import { describe, expect, it } from "vitest"
import type { ContainerEngine } from "../../src/services/ContainerEngine.js"

type Frame = ContainerEngine.Frame
import { Demuxer, execSession } from "../../src/layers/internal/container/demux.js"

const frame = (stream: 1 | 2, text: string): Buffer => {
  const payload = Buffer.from(text)
  const header = Buffer.alloc(8)
  header[0] = stream
  header.writeUInt32BE(payload.length, 4)
  return Buffer.concat([header, payload])
}

const shown = (frames: ReadonlyArray<Frame | undefined>) =>
  frames.map((each) => each === undefined ? undefined : `${each.stream}:${Buffer.from(each.bytes).toString()}`)

/**
 * Every frame a session reads from a connection that delivers `chunks` as they are asked for, then
 * ends, or breaks (a reset) when asked for more.
 */
const readAll = (chunks: ReadonlyArray<Buffer>, how: "end" | "break") =>
  Effect.gen(function*() {
    const left = [...chunks]
    const socket = new Duplex({
      read() {
        const chunk = left.shift()
        if (chunk !== undefined) this.push(chunk)
        else if (how === "end") this.push(null)
        else this.destroy(new Error("read ECONNRESET"))
      },
      write: (_chunk, _encoding, done) => done()
    })
    const session = execSession(socket)
    const frames: Array<Frame> = []
    for (let next = yield* session.next; next !== undefined; next = yield* session.next) frames.push(next)
    return shown(frames)
  })

describe("the exec stream's frames", () => {
  it("come out whole and in order however the chunks cut them; empty frames carry nothing", () => {
    const bytes = Buffer.concat([frame(1, "out 1\n"), frame(2, "err\n"), frame(1, ""), frame(1, "out 2\n")])
    for (let cut = 1; cut < bytes.length; cut++) {
      const demuxer = new Demuxer()
      const frames = [...demuxer.push(bytes.subarray(0, cut)), ...demuxer.push(bytes.subarray(cut))]
      expect(shown(frames)).toEqual(["stdout:out 1\n", "stderr:err\n", "stdout:out 2\n"])
      expect(demuxer.end()).toBeUndefined()
    }
  })

  it("a frame the stream cut short gives the payload that arrived, on its stream; a cut header gives nothing", () => {
    const demuxer = new Demuxer()
    expect(demuxer.push(frame(2, "partial line").subarray(0, 8 + 7))).toEqual([])
    expect(shown([demuxer.end()])).toEqual(["stderr:partial"])
    expect(demuxer.end()).toBeUndefined()
    const cutHeader = new Demuxer()
    expect(cutHeader.push(frame(1, "x").subarray(0, 5))).toEqual([])
    expect(cutHeader.end()).toBeUndefined()
  })

  it("a session delivers every byte that arrived, whether its connection ended or broke mid-frame", async () => {
    const chunks = [frame(1, "first\n"), frame(1, "second line, cut").subarray(0, 8 + 11)]
    expect(await Effect.runPromise(readAll(chunks, "end"))).toEqual(["stdout:first\n", "stdout:second line"])
    expect(await Effect.runPromise(readAll(chunks, "break"))).toEqual(["stdout:first\n", "stdout:second line"])
    expect(await Effect.runPromise(readAll([frame(2, "all\n")], "end"))).toEqual(["stderr:all\n"])
  })
})
