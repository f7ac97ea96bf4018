/**
 * The Docker Engine's multiplexed exec stream (no TTY): frames of an 8-byte header — the stream
 * (1 stdout, 2 stderr), three zero bytes, the payload's length as a big-endian uint32 — and the
 * payload. Parsed here rather than with docker-modem's `demuxStream`, which writes to Node streams
 * without waiting for them: the reader takes a frame only after the previous one was consumed, so
 * a slow consumer holds back the exec, not this process's memory.
 *
 * @internal
 */
import type { Frame } from "./ContainerEngine.js"

const headerBytes = 8

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
      const type = this.pending[0]
      const bytes = this.pending.subarray(headerBytes, headerBytes + length)
      // Stream 0 (stdin) is never sent back; anything else unknown goes to stdout rather than being lost.
      if (length > 0) frames.push({ stream: type === 2 ? "stderr" : "stdout", bytes })
      this.pending = this.pending.subarray(headerBytes + length)
    }
    return frames
  }

  /** Bytes of an incomplete frame left when the stream ended. */
  get leftover(): number {
    return this.pending.length
  }
}
