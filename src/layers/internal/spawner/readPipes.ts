/**
 * Reading a child's stdout and stderr with plain `'data'` listeners: a chunk goes straight to its
 * sink from the listener, and only a chunk whose sink returns work (a spill write) wakes the one
 * reading loop, which runs that work while later chunks queue behind it. No `Stream`, no fiber per
 * pipe, no per-chunk allocation when no work is needed, and no chunk held once its sink took it.
 *
 * @internal
 */
import { Effect } from "effect"
import type { Readable } from "node:stream"
import type { ProcessSpawner } from "../../../services/ProcessSpawner.js"

/**
 * Bytes queued behind pending sink work before both pipes are paused: a sink that waits (a spill
 * file behind the disk) stops the reading instead of growing the queue.
 */
const maxQueuedBytes = 256 * 1024

/** What a held pipe read before {@link readPipes} took it over. */
interface Held {
  readonly chunks: Array<Uint8Array>
  ended: boolean
  failure: unknown
  bytes: number
  readonly release: () => void
}

const held = new WeakMap<Readable, Held>()

/**
 * Starts reading `readable` at once, keeping what it reads until {@link readPipes} takes the pipe
 * over. A child's pipes must be read from the tick they are created: once the child exits, Node
 * resumes every stdio stream (`flushStdio`), and a stream nobody listens to then drops its data —
 * the whole output of a command that exits before the reading fiber starts. Past the queue bound
 * the pipe is paused (Node's resume at exit still flows into the held chunks, never to nobody).
 */
export const holdPipe = (readable: Readable): void => {
  const chunks: Array<Uint8Array> = []
  const onData = (chunk: Uint8Array) => {
    chunks.push(chunk)
    state.bytes += chunk.length
    if (state.bytes >= maxQueuedBytes) readable.pause()
  }
  const onEnd = () => {
    state.ended = true
  }
  const onError = (error: unknown) => {
    state.failure = error
    state.ended = true
  }
  const state: Held = {
    chunks,
    ended: false,
    failure: undefined,
    bytes: 0,
    release: () => {
      readable.off("data", onData).off("end", onEnd).off("close", onEnd).off("error", onError)
    }
  }
  readable.on("data", onData).once("end", onEnd).once("close", onEnd).once("error", onError)
  held.set(readable, state)
}

/**
 * Reads `stdout` and `stderr` into `sinks` until both have ended, closed or failed (a read error
 * ends its pipe after the bytes read before it). Interruption stops the reading; the pipes
 * themselves are released by whoever owns them.
 */
export const readPipes = (
  pipes: { readonly stdout: Readable; readonly stderr: Readable },
  sinks: ProcessSpawner.OutputSinks
): Effect.Effect<void> =>
  Effect.suspend(() => {
    // `busy`: the loop owns delivery (work is pending or chunks are queued); listeners only queue.
    let busy = false
    let work: Effect.Effect<void> | undefined
    let chunks: Array<Uint8Array> = []
    let targets: Array<ProcessSpawner.OutputSink> = []
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
    const attach = (readable: Readable, sink: ProcessSpawner.OutputSink) => {
      const onData = (chunk: Uint8Array) => {
        if (!busy) {
          work = sink(chunk)
          if (work === undefined) return
          busy = true
          return signal()
        }
        chunks.push(chunk)
        targets.push(sink)
        queued += chunk.length
        if (queued >= maxQueuedBytes && !paused) {
          paused = true
          for (const each of readables) each.pause()
        }
      }
      // A held pipe: what it read so far goes first, and its listeners hand over to ours in this
      // same tick, so no event falls in between.
      const early = held.get(readable)
      if (early !== undefined) {
        held.delete(readable)
        early.release()
        if (early.failure !== undefined) failures.push(early.failure)
        for (const chunk of early.chunks) onData(chunk)
        early.chunks.length = 0
      }
      if (readable.destroyed || early?.ended === true) return
      open++
      let ended = false
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
      // The hold paused the pipe at its bound; from here the queue bound above governs.
      if (early !== undefined && early.bytes >= maxQueuedBytes && !paused) readable.resume()
    }
    attach(pipes.stdout, sinks.stdout)
    attach(pipes.stderr, sinks.stderr)

    // The check and the registration are one step, so nothing arrives unseen in between.
    const arrival = Effect.async<void>((resume) => {
      if (work !== undefined || open === 0) return resume(Effect.void)
      wake = () => resume(Effect.void)
      return Effect.sync(() => {
        wake = undefined
      })
    })

    return Effect.gen(function*() {
      while (true) {
        if (work !== undefined) {
          const pending = work
          work = undefined
          yield* pending
        }
        while (chunks.length > 0) {
          const batch = chunks
          const batchTargets = targets
          chunks = []
          targets = []
          for (let i = 0; i < batch.length; i++) {
            const chunk = batch[i]!
            batch[i] = undefined as never
            queued -= chunk.length
            const next = batchTargets[i]!(chunk)
            if (next !== undefined) yield* next
          }
        }
        busy = false
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
