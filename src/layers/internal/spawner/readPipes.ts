/**
 * Reading a child's stdout and stderr with plain `'data'` listeners: a chunk goes straight to its
 * sink from the listener, and only a chunk whose sink returns work (a spill write) wakes the one
 * reading loop, which runs that work while later chunks queue behind it. No `Stream`, no fiber per
 * pipe, no per-chunk allocation when no work is needed, and no chunk held once its sink took it.
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import type { Readable } from "node:stream"
import type { ProcessSpawner } from "../../../services/ProcessSpawner.js"

/**
 * Bytes queued behind pending sink work before both pipes are paused: a sink that waits (a spill
 * file behind the disk) stops the reading instead of growing the queue.
 */
const maxQueuedBytes = 256 * 1024

/** What a held pipe read before a {@link PipeReader} took it over. */
interface Held {
  readonly chunks: Array<Uint8Array>
  ended: boolean
  failure: unknown
  bytes: number
  readonly release: () => void
}

const held = new WeakMap<Readable, Held>()

/**
 * Starts reading `readable` at once, keeping what it reads until a {@link PipeReader} takes the pipe
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
 * Reads `stdout` and `stderr` into `sinks` from the moment it is made: a chunk goes to its sink
 * from the `'data'` listener, and only a sink's work (or a chunk queued behind it) needs
 * {@link PipeReader.drain} to run. A supervisor that waits in one callback reads {@link ended} and
 * {@link hasWork}, and is told of their changes through {@link onChange}, without a fiber.
 */
export class PipeReader implements ProcessSpawner.OpenPipes {
  // `busy`: the drain owns delivery (work is pending or chunks are queued); listeners only queue.
  private busy = false
  private work: Effect.Effect<void> | undefined
  private chunks: Array<Uint8Array> = []
  private targets: Array<ProcessSpawner.OutputSink> = []
  private queued = 0
  private open = 0
  private paused = false
  private listener: (() => void) | undefined
  private readonly failures: Array<unknown> = []
  private readonly detachers: Array<() => void> = []
  private readonly readables: ReadonlyArray<Readable>

  constructor(pipes: { readonly stdout: Readable; readonly stderr: Readable }, sinks: ProcessSpawner.OutputSinks) {
    this.readables = [pipes.stdout, pipes.stderr]
    this.attach(pipes.stdout, sinks.stdout)
    this.attach(pipes.stderr, sinks.stderr)
  }

  get ended(): boolean {
    return this.open === 0 && !this.hasWork
  }

  /** A read failure is work too: the drain reports it. */
  get hasWork(): boolean {
    return this.busy || this.failures.length > 0
  }

  onChange(listener: () => void): () => void {
    this.listener = listener
    return () => {
      if (this.listener === listener) this.listener = undefined
    }
  }

  close(): void {
    for (const detach of this.detachers) detach()
    this.detachers.length = 0
  }

  private signal() {
    const listener = this.listener
    this.listener = undefined
    listener?.()
  }

  private attach(readable: Readable, sink: ProcessSpawner.OutputSink) {
    const onData = (chunk: Uint8Array) => {
      if (!this.busy) {
        this.work = sink(chunk)
        if (this.work === undefined) return
        this.busy = true
        return this.signal()
      }
      this.chunks.push(chunk)
      this.targets.push(sink)
      this.queued += chunk.length
      if (this.queued >= maxQueuedBytes && !this.paused) {
        this.paused = true
        for (const each of this.readables) each.pause()
      }
    }
    // A held pipe: what it read so far goes first, and its listeners hand over to ours in this
    // same tick, so no event falls in between.
    const early = held.get(readable)
    if (early !== undefined) {
      held.delete(readable)
      early.release()
      if (early.failure !== undefined) this.failures.push(early.failure)
      for (const chunk of early.chunks) onData(chunk)
      early.chunks.length = 0
    }
    if (readable.destroyed || early?.ended === true) return
    this.open++
    let ended = false
    const onEnd = () => {
      if (ended) return
      ended = true
      this.open--
      this.signal()
    }
    const onError = (error: unknown) => {
      this.failures.push(error)
      onEnd()
    }
    readable.on("data", onData).once("end", onEnd).once("close", onEnd).once("error", onError)
    this.detachers.push(() =>
      readable.off("data", onData).off("end", onEnd).off("close", onEnd).off("error", onError)
    )
    // The hold paused the pipe at its bound; from here the queue bound above governs.
    if (early !== undefined && early.bytes >= maxQueuedBytes && !this.paused) readable.resume()
  }

  /**
   * Runs the sinks' work and delivers queued chunks until both pipes have ended, closed or failed
   * (a read error ends its pipe after the bytes read before it). Interruption stops the reading;
   * the pipes themselves are released by whoever owns them.
   */
  get drain(): Effect.Effect<void> {
    const self = this
    // The check and the registration are one step, so nothing arrives unseen in between.
    const arrival = Effect.async<void>((resume) => {
      if (self.work !== undefined || self.open === 0) return resume(Effect.void)
      self.listener = () => resume(Effect.void)
      return Effect.sync(() => {
        self.listener = undefined
      })
    })
    return Effect.gen(function*() {
      while (true) {
        if (self.work !== undefined) {
          const pending = self.work
          self.work = undefined
          yield* pending
        }
        while (self.chunks.length > 0) {
          const batch = self.chunks
          const batchTargets = self.targets
          self.chunks = []
          self.targets = []
          for (let i = 0; i < batch.length; i++) {
            const chunk = batch[i]!
            batch[i] = undefined as never
            self.queued -= chunk.length
            const next = batchTargets[i]!(chunk)
            if (next !== undefined) yield* next
          }
        }
        self.busy = false
        while (self.failures.length > 0) yield* Effect.logDebug("pipe read failed", self.failures.shift())
        if (self.open === 0) return
        if (self.paused) {
          self.paused = false
          for (const readable of self.readables) readable.resume()
        }
        yield* arrival
      }
    }).pipe(Effect.ensuring(Effect.sync(() => self.close())))
  }
}
