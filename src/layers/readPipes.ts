/**
 * Reading a child's stdout and stderr with plain `'data'` listeners into one queue that a single
 * loop hands to the sinks: no `Stream`, no fiber per pipe, and a chunk reference is dropped as soon
 * as its sink has taken it.
 *
 * @since 0.1.0
 */
import { Effect } from "effect"
import type { Readable } from "node:stream"
import type { OutputSinks } from "../services/ProcessSpawner.js"

/**
 * Bytes queued between the pipes and the sinks before both pipes are paused: a sink that waits
 * (a spill file behind the disk) stops the reading instead of growing the queue.
 */
const maxQueuedBytes = 256 * 1024

type Sink = (chunk: Uint8Array) => Effect.Effect<void>

/**
 * Reads `stdout` and `stderr` into `sinks` until both have ended, closed or failed (a read error
 * ends its pipe after the bytes read before it). Interruption stops the reading; the pipes
 * themselves are released by whoever owns them.
 *
 * @since 0.1.0
 */
export const readPipes = (
  pipes: { readonly stdout: Readable; readonly stderr: Readable },
  sinks: OutputSinks
): Effect.Effect<void> =>
  Effect.suspend(() => {
    let chunks: Array<Uint8Array> = []
    let targets: Array<Sink> = []
    let queued = 0
    let open = 0
    let paused = false
    let wake: (() => void) | undefined
    const failures: Array<unknown> = []
    const detachers: Array<() => void> = []
    const readables = [pipes.stdout, pipes.stderr]
    const signal = () => {
      const resume = wake
      wake = undefined
      resume?.()
    }
    const attach = (readable: Readable, sink: Sink) => {
      if (readable.destroyed) return
      open++
      let ended = false
      const onData = (chunk: Uint8Array) => {
        chunks.push(chunk)
        targets.push(sink)
        queued += chunk.length
        if (queued >= maxQueuedBytes && !paused) {
          paused = true
          for (const each of readables) each.pause()
        }
        signal()
      }
      const onEnd = () => {
        if (ended) return
        ended = true
        open--
        signal()
      }
      const onError = (error: unknown) => {
        failures.push(error)
        onEnd()
      }
      readable.on("data", onData).once("end", onEnd).once("close", onEnd).once("error", onError)
      detachers.push(() => readable.off("data", onData).off("end", onEnd).off("close", onEnd).off("error", onError))
    }
    attach(pipes.stdout, sinks.stdout)
    attach(pipes.stderr, sinks.stderr)

    // Registers before anything can arrive unseen: the check and the registration are one step.
    const arrival = Effect.async<void>((resume) => {
      if (chunks.length > 0 || open === 0) return resume(Effect.void)
      wake = () => resume(Effect.void)
      return Effect.sync(() => {
        wake = undefined
      })
    })

    return Effect.gen(function*() {
      while (true) {
        while (chunks.length > 0) {
          const batch = chunks
          const batchTargets = targets
          chunks = []
          targets = []
          for (let i = 0; i < batch.length; i++) {
            const chunk = batch[i]!
            batch[i] = undefined as never
            queued -= chunk.length
            yield* batchTargets[i]!(chunk)
          }
        }
        while (failures.length > 0) yield* Effect.logDebug("pipe read failed", failures.shift())
        if (open === 0) return
        if (paused) {
          paused = false
          for (const readable of readables) readable.resume()
        }
        yield* arrival
      }
    }).pipe(Effect.ensuring(Effect.sync(() => {
      for (const detach of detachers) detach()
    })))
  })
