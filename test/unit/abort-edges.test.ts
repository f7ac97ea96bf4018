/**
 * Where a host's `AbortSignal` becomes interruption of a tool call: `abortOnSignal` (the MCP edge)
 * and `CallRunner.runUntil` (the Cordis edge, on the call's own fiber). Either answers the aborted
 * result only once the call's interruption is over, runs nothing for a signal that has already
 * fired, and leaves no listener on a signal whose call has finished.
 */
import { getEventListeners } from "node:events"
import { Effect, Fiber, Layer, ManagedRuntime } from "effect"
import { describe, expect, it } from "vitest"
import { makeCallRunner } from "../../src/cordis/CallRunner.js"
import type { AgentTools } from "../../src/services/AgentTools.js"
import { abortedCallResult, abortOnSignal } from "../../src/tool/abortable.js"

const answered: AgentTools.Result = { isError: false, value: 1, text: "1" }

/** A call that runs until interrupted, whose interruption lasts until `finish()`. */
const slowToStop = () => {
  let started!: () => void
  const running = new Promise<void>((resolve) => (started = resolve))
  let finish!: () => void
  const finished = new Promise<void>((resolve) => (finish = resolve))
  const events: Array<string> = []
  const call = Effect.sync(started).pipe(
    Effect.zipRight(Effect.never),
    Effect.onInterrupt(() => Effect.promise(() => finished).pipe(Effect.tap(() => Effect.sync(() => events.push("stopped"))))),
    Effect.as(answered)
  )
  return { call, running, finish, events }
}

/** Whether `promise` is still pending once everything already queued has run. */
const pending = (promise: Promise<unknown>) =>
  Promise.race([promise.then(() => false, () => false), new Promise<boolean>((resolve) => setImmediate(() => resolve(true)))])

describe("abortOnSignal", () => {
  it("answers `command aborted` once the interrupted call has stopped", async () => {
    const abort = new AbortController()
    const { call, events, finish, running } = slowToStop()
    const result = Effect.runPromise(abortOnSignal(call, abort.signal)).then((r) => {
      events.push("answered")
      return r
    })
    await running
    abort.abort()
    expect(await pending(result)).toBe(true)
    finish()
    expect(await result).toEqual(abortedCallResult)
    expect(events).toEqual(["stopped", "answered"])
  })

  it("interrupting the caller interrupts the call and waits for it", async () => {
    const { call, events, finish, running } = slowToStop()
    const fiber = Effect.runFork(abortOnSignal(call, new AbortController().signal))
    await running
    const interrupted = Effect.runPromise(Fiber.interrupt(fiber)).then(() => events.push("caller done"))
    expect(await pending(interrupted)).toBe(true)
    finish()
    await interrupted
    expect(events).toEqual(["stopped", "caller done"])
  })

  it("answers a finished call's own result and leaves no listener behind", async () => {
    const abort = new AbortController()
    expect(await Effect.runPromise(abortOnSignal(Effect.succeed(answered), abort.signal))).toEqual(answered)
    expect(getEventListeners(abort.signal, "abort")).toHaveLength(0)
  })
})

describe("CallRunner.runUntil", () => {
  it("answers the aborted value once the interrupted call has stopped", async () => {
    const runner = await makeCallRunner(ManagedRuntime.make(Layer.empty))
    const abort = new AbortController()
    const { call, events, finish, running } = slowToStop()
    const result = runner.runUntil(call, abort.signal, abortedCallResult).then((r) => {
      events.push("answered")
      return r
    })
    await running
    abort.abort()
    expect(await pending(result)).toBe(true)
    finish()
    expect(await result).toEqual(abortedCallResult)
    expect(events).toEqual(["stopped", "answered"])
    await runner.shutdown()
  })

  it("runs nothing for a signal that has already fired", async () => {
    const runner = await makeCallRunner(ManagedRuntime.make(Layer.empty))
    let ran = false
    const call = Effect.sync(() => (ran = true)).pipe(Effect.as(answered))
    expect(await runner.runUntil(call, AbortSignal.abort(), abortedCallResult)).toEqual(abortedCallResult)
    expect(ran).toBe(false)
    await runner.shutdown()
  })

  it("answers a finished call's own result and leaves no listener behind", async () => {
    const runner = await makeCallRunner(ManagedRuntime.make(Layer.empty))
    const abort = new AbortController()
    expect(await runner.runUntil(Effect.succeed(answered), abort.signal, abortedCallResult)).toEqual(answered)
    expect(getEventListeners(abort.signal, "abort")).toHaveLength(0)
    await runner.shutdown()
  })
})
