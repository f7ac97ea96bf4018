/**
 * An exec with a TTY on its hijacked connection: the engine sends the TTY's output as it is (no
 * frame headers; stdout and stderr are one stream), and takes what is written as typed input.
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import type { Duplex } from "node:stream"
import type { ContainerEngine } from "../../../services/ContainerEngine.js"

/** The exec's raw stream, one chunk a frame (all `stdout`). */
export const ttySession = (socket: Duplex): Omit<ContainerEngine.ExecSession, "exitCode" | "resize"> => {
  const chunks = socket[Symbol.asyncIterator]() as AsyncIterator<Buffer>
  let ended = false
  const nextFrame = async (): Promise<ContainerEngine.Frame | undefined> => {
    while (!ended) {
      // A broken connection ends the output as its end does.
      const chunk = await chunks.next().catch(() => ({ done: true as const, value: undefined }))
      if (chunk.done === true) ended = true
      else if (chunk.value.length > 0) return { stream: "stdout", bytes: chunk.value }
    }
    return undefined
  }
  socket.on("error", () => {})
  return {
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
