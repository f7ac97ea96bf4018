/**
 * The Node pipe reader behind `ProcessSpawner.Process.openPipes`, over in-memory
 * streams: order, read errors, the bound on what it queues while a sink waits, pipes held before the
 * reader starts, and the callback face a supervisor waits on without a fiber.
 */
import { describe, expect, it } from "@effect/vitest"
import { Deferred, Effect, Fiber } from "effect"
import { PassThrough } from "node:stream"
import { holdPipe, PipeReader } from "../../src/layers/internal/spawner/readPipes.js"

const text = (chunks: ReadonlyArray<Uint8Array>) => Buffer.concat(chunks).toString("utf8")

/** Reads both pipes to their end, as a supervisor's reading fiber does. */
const drainInto = (...args: ConstructorParameters<typeof PipeReader>) => Effect.suspend(() => new PipeReader(...args).drain)

describe("PipeReader.drain", () => {
  it.live("delivers each pipe's chunks in order and completes when both have ended", () =>
    Effect.gen(function*() {
      const stdout = new PassThrough()
      const stderr = new PassThrough()
      const out: Array<Uint8Array> = []
      const err: Array<Uint8Array> = []
      const reading = yield* Effect.fork(drainInto({ stdout, stderr }, {
        stdout: (chunk) => void out.push(chunk),
        stderr: (chunk) => void err.push(chunk)
      }))
      stdout.write("a")
      stderr.write("x")
      stdout.end("b")
      yield* Effect.yieldNow()
      expect(reading.unsafePoll()).toBeNull()
      stderr.end("y")
      yield* Fiber.join(reading)
      expect([text(out), text(err)]).toEqual(["ab", "xy"])
    }))

  it.live("a read error ends its pipe and keeps the bytes read before it", () =>
    Effect.gen(function*() {
      const stdout = new PassThrough()
      const stderr = new PassThrough()
      const out: Array<Uint8Array> = []
      const reading = yield* Effect.fork(drainInto({ stdout, stderr }, {
        stdout: (chunk) => void out.push(chunk),
        stderr: () => undefined
      }))
      stdout.write("kept")
      yield* Effect.promise(() => new Promise((resolve) => setImmediate(resolve)))
      stdout.destroy(new Error("EIO"))
      stderr.end()
      yield* Fiber.join(reading)
      expect(text(out)).toBe("kept")
    }))

  it.live("pauses both pipes while a waiting sink holds the queue at its bound", () =>
    Effect.gen(function*() {
      const stdout = new PassThrough({ highWaterMark: 1024 })
      const stderr = new PassThrough()
      const gate = yield* Deferred.make<void>()
      let delivered = 0
      const reading = yield* Effect.fork(drainInto({ stdout, stderr }, {
        stdout: (chunk) => Deferred.await(gate).pipe(Effect.zipRight(Effect.sync(() => (delivered += chunk.length)))),
        stderr: () => undefined
      }))
      const chunk = Buffer.alloc(64 * 1024)
      const written = 32 * chunk.length
      for (let i = 0; i < 32; i++) stdout.write(chunk)
      for (let i = 0; i < 10; i++) yield* Effect.promise(() => new Promise((resolve) => setImmediate(resolve)))
      // The reader took at most its bound (plus the chunk that crossed it); the rest waits in the pipe.
      expect(stdout.isPaused()).toBe(true)
      expect(stderr.isPaused()).toBe(true)
      expect(stdout.readableLength + stdout.writableLength).toBeGreaterThanOrEqual(written - 256 * 1024 - chunk.length)
      yield* Deferred.succeed(gate, undefined)
      stdout.end()
      stderr.end()
      yield* Fiber.join(reading)
      expect(delivered).toBe(written)
    }))

  it.live("a held pipe keeps what it read before the reader started, in order, through a resume", () =>
    Effect.gen(function*() {
      const stdout = new PassThrough()
      const stderr = new PassThrough()
      holdPipe(stdout)
      holdPipe(stderr)
      stdout.write("early ")
      stderr.end("ended before the reader")
      // What Node does to every stdio stream once the child has exited.
      stdout.resume()
      stderr.resume()
      yield* Effect.promise(() => new Promise((resolve) => setImmediate(resolve)))
      const out: Array<Uint8Array> = []
      const err: Array<Uint8Array> = []
      const reading = yield* Effect.fork(drainInto({ stdout, stderr }, {
        stdout: (chunk) => void out.push(chunk),
        stderr: (chunk) => void err.push(chunk)
      }))
      stdout.end("late")
      yield* Fiber.join(reading)
      expect([text(out), text(err)]).toEqual(["early late", "ended before the reader"])
    }))

  it.live("without work, delivers from the pipes' own callbacks and says when both have ended", () =>
    Effect.gen(function*() {
      const stdout = new PassThrough()
      const stderr = new PassThrough()
      const out: Array<Uint8Array> = []
      const reader = new PipeReader({ stdout, stderr }, { stdout: (chunk) => void out.push(chunk), stderr: () => undefined })
      let changes = 0
      const watch = () => reader.onChange(() => changes++)
      watch()
      stdout.end("all of it")
      yield* Effect.promise(() => new Promise((resolve) => setImmediate(resolve)))
      expect(text(out)).toBe("all of it")
      expect([reader.ended, reader.hasWork, changes]).toEqual([false, false, 1])
      watch()
      stderr.end()
      yield* Effect.promise(() => new Promise((resolve) => setImmediate(resolve)))
      expect([reader.ended, reader.hasWork, changes]).toEqual([true, false, 2])
    }))

  it.live("a sink's work is reported, waits for drain, and the chunks behind it keep their order", () =>
    Effect.gen(function*() {
      const stdout = new PassThrough()
      const stderr = new PassThrough()
      const out: Array<string> = []
      const reader = new PipeReader({ stdout, stderr }, {
        stdout: (chunk) => {
          const part = Buffer.from(chunk).toString("utf8")
          return part === "slow" ? Effect.sync(() => void out.push(part)) : void out.push(part)
        },
        stderr: () => undefined
      })
      let changed = false
      reader.onChange(() => (changed = true))
      stdout.write("fast ")
      yield* Effect.promise(() => new Promise((resolve) => setImmediate(resolve)))
      stdout.write("slow")
      yield* Effect.promise(() => new Promise((resolve) => setImmediate(resolve)))
      stdout.end(" after")
      stderr.end()
      yield* Effect.promise(() => new Promise((resolve) => setImmediate(resolve)))
      expect([changed, reader.hasWork, reader.ended, out]).toEqual([true, true, false, ["fast "]])
      yield* reader.drain
      expect([reader.hasWork, reader.ended, out.join("")]).toEqual([false, true, "fast slow after"])
    }))

  it.live("a read failure is work for the drain, after which the reader has ended", () =>
    Effect.gen(function*() {
      const stdout = new PassThrough()
      const stderr = new PassThrough()
      const reader = new PipeReader({ stdout, stderr }, { stdout: () => undefined, stderr: () => undefined })
      stdout.destroy(new Error("EIO"))
      stderr.end()
      yield* Effect.promise(() => new Promise((resolve) => setImmediate(resolve)))
      expect([reader.hasWork, reader.ended]).toEqual([true, false])
      yield* reader.drain
      expect([reader.hasWork, reader.ended]).toEqual([false, true])
    }))
})
