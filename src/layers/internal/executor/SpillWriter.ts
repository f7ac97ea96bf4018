/**
 * A write-behind buffer in front of a spill file: the pipe reader hands chunks to a Node
 * `WriteStream` on the file's descriptor and goes back to reading, while the stream batches queued
 * chunks into `writev` calls. Its high-water mark is the backpressure: a reader only waits for
 * `drain` when the disk is that far behind.
 *
 * @internal
 */
import type * as FileSystem from "@effect/platform/FileSystem"
import { SystemError } from "@effect/platform/Error"
import type { PlatformError } from "@effect/platform/Error"
import * as Effect from "effect/Effect"
import * as NodeFs from "node:fs"

const highWaterMark = 1024 * 1024

/**
 * The writer side of one spill file.
 */
export interface SpillWriter {
  /** Queues bytes; fails once an earlier write has failed. */
  readonly write: (bytes: Uint8Array) => Effect.Effect<void, PlatformError>
  /** {@link write} done at once; returns only what is left to wait for (`drain`, or the failure). */
  readonly offer: (bytes: Uint8Array) => Effect.Effect<void, PlatformError> | undefined
  /** Ends the stream and waits for it: `true` when every queued byte reached the file. */
  readonly drain: Effect.Effect<boolean>
}

const writeFailed = (cause: unknown) =>
  new SystemError({ reason: "Unknown", module: "FileSystem", method: "write", description: String(cause), cause })

/**
 * Wraps an open file; the file's own scope still closes the descriptor.
 */
export const makeSpillWriter = (file: FileSystem.File): SpillWriter => {
  const stream = NodeFs.createWriteStream("", { fd: file.fd, autoClose: false, highWaterMark })
  let failure: PlatformError | undefined
  stream.on("error", (error) => {
    failure ??= writeFailed(error)
  })
  const settled = (event: "drain" | "finish") =>
    Effect.async<void>((resume) => {
      // An errored stream (autoClose off) never emits drain/finish again.
      if (failure !== undefined) return resume(Effect.void)
      const detach = () => stream.off(event, done).off("error", done)
      const done = () => {
        detach()
        resume(Effect.void)
      }
      stream.on(event, done).on("error", done)
      return Effect.sync(detach)
    })
  const offer = (bytes: Uint8Array) => {
    if (failure !== undefined) return Effect.fail(failure)
    return stream.write(bytes) ? undefined : settled("drain")
  }
  return {
    write: (bytes) => Effect.suspend(() => offer(bytes) ?? Effect.void),
    offer,
    drain: Effect.suspend(() => {
      if (failure !== undefined || stream.writableFinished || stream.destroyed) {
        return Effect.succeed(failure === undefined)
      }
      const finished = settled("finish")
      stream.end()
      return Effect.map(finished, () => failure === undefined)
    })
  }
}
