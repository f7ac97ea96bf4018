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

type Call = Effect.Effect<AgentTools.Result>

/** Each edge as a Promise-returning run until a signal fires, over whatever it needs set up and closed. */
const edges: ReadonlyArray<{
  readonly name: string
  readonly open: () => Promise<{ readonly run: (call: Call, signal: AbortSignal) => Promise<AgentTools.Result>; readonly close: () => Promise<void> }>
}> = [
  {
    name: "abortOnSignal",
    open: async () => ({ run: (call, signal) => Effect.runPromise(abortOnSignal(call, signal)), close: async () => {} })
  },
  {
    name: "CallRunner.runUntil",
    open: async () => {
      const runner = await makeCallRunner(ManagedRuntime.make(Layer.empty))
      return { run: (call, signal) => runner.runUntil(call, signal, abortedCallResult), close: () => runner.shutdown() }
    }
  }
]

describe.each(edges)("$name", ({ open }) => {
  it("answers the aborted result once the interrupted call has stopped", async () => {
    const edge = await open()
    const abort = new AbortController()
    const { call, events, finish, running } = slowToStop()
    const result = edge.run(call, abort.signal).then((r) => {
      events.push("answered")
      return r
    })
    await running
    abort.abort()
    expect(await pending(result)).toBe(true)
    finish()
    expect(await result).toEqual(abortedCallResult)
    expect(events).toEqual(["stopped", "answered"])
    await edge.close()
  })

  it("answers a finished call's own result and leaves no listener behind", async () => {
    const edge = await open()
    const abort = new AbortController()
    expect(await edge.run(Effect.succeed(answered), abort.signal)).toEqual(answered)
    expect(getEventListeners(abort.signal, "abort")).toHaveLength(0)
    await edge.close()
  })
})

describe("abortOnSignal", () => {
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
})

describe("CallRunner.runUntil", () => {
  it("runs nothing for a signal that has already fired", async () => {
    const runner = await makeCallRunner(ManagedRuntime.make(Layer.empty))
    let ran = false
    const call = Effect.sync(() => (ran = true)).pipe(Effect.as(answered))
    expect(await runner.runUntil(call, AbortSignal.abort(), abortedCallResult)).toEqual(abortedCallResult)
    expect(ran).toBe(false)
    await runner.shutdown()
  })
})
