/**
 * The Docker Engine's multiplexed exec stream (no TTY): frames of an 8-byte header — the stream
 * (1 stdout, 2 stderr), three zero bytes, the payload's length as a big-endian uint32 — and the
 * payload. Parsed here rather than with docker-modem's `demuxStream`, which writes to Node streams
 * without waiting for them: the session reads a chunk only once the frames before it were taken, so
 * a slow consumer holds back the exec, not this process's memory. Every byte that arrived is
 * delivered, a frame the connection cut short included. An exec with a TTY sends the TTY's output
 * as it is (no headers; stdout and stderr are one stream): each chunk is a frame of stdout.
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import type { Duplex } from "node:stream"
import type { ContainerEngine } from "../../../services/ContainerEngine.js"

type Frame = ContainerEngine.Frame

const headerBytes = 8

// Stream 0 (stdin) is never sent back; anything else unknown goes to stdout rather than being lost.
const streamOf = (header: Buffer): Frame["stream"] => header[0] === 2 ? "stderr" : "stdout"

/** Splits raw chunks into frames; a frame split across chunks is kept until it is complete. */
export class Demuxer {
  private pending: Buffer = Buffer.alloc(0)

  /** The frames completed by `chunk`, in order. */
  push(chunk: Buffer): Array<Frame> {
    this.pending = this.pending.length === 0 ? chunk : Buffer.concat([this.pending, chunk])
    const frames: Array<Frame> = []
    while (this.pending.length >= headerBytes) {
      const length = this.pending.readUInt32BE(4)
      if (this.pending.length < headerBytes + length) break
      const bytes = this.pending.subarray(headerBytes, headerBytes + length)
      if (length > 0) frames.push({ stream: streamOf(this.pending), bytes })
      this.pending = this.pending.subarray(headerBytes + length)
    }
    return frames
  }

  /**
   * The stream has ended: the payload of a frame it cut short (the connection broke mid-frame), which
   * the command did write. A header cut short carries none.
   */
  end(): Frame | undefined {
    const pending = this.pending
    this.pending = Buffer.alloc(0)
    if (pending.length <= headerBytes) return undefined
    return { stream: streamOf(pending), bytes: pending.subarray(headerBytes) }
  }
}

/** A TTY's stream: each chunk as it came, as stdout. */
const rawFrames = {
  push: (chunk: Buffer): Array<Frame> => chunk.length > 0 ? [{ stream: "stdout", bytes: chunk }] : [],
  end: (): Frame | undefined => undefined
}

/**
 * The exec on its hijacked connection: input written to it, output read from it frame by frame
 * (with `tty`, typed input and the TTY's output).
 */
export const execSession = (socket: Duplex, tty = false): Omit<ContainerEngine.ExecSession, "exitCode" | "resize"> => {
  const demuxer = tty ? rawFrames : new Demuxer()
  const queued: Array<Frame> = []
  const chunks = socket[Symbol.asyncIterator]() as AsyncIterator<Buffer>
  let ended = false
  const nextFrame = async (): Promise<Frame | undefined> => {
    while (queued.length === 0 && !ended) {
      // A broken connection ends the output as its end does.
      const chunk = await chunks.next().catch(() => ({ done: true as const, value: undefined }))
      if (chunk.done !== true) queued.push(...demuxer.push(chunk.value))
      else {
        ended = true
        const cutShort = demuxer.end()
        if (cutShort !== undefined) queued.push(cutShort)
      }
    }
    return queued.shift()
  }
  // A connection the engine breaks while nobody reads it (an idle served exec) must not throw: its
  // reader finds the stream ended.
  socket.on("error", () => {})
  return {
    // The socket buffers what the exec has not read yet; a write error ends the output stream.
    sendInput: (bytes) =>
      Effect.sync(() => {
        socket.end(bytes)
      }),
    write: (bytes) =>
      Effect.sync(() => {
        if (!socket.destroyed && socket.writable) socket.write(bytes)
      }),
    next: Effect.promise(nextFrame),
    close: Effect.sync(() => {
      socket.destroy()
    })
  }
}
