import { describe, expect, it } from "@effect/vitest"
import { Deferred, Effect, Exit, Fiber, Layer, TestClock } from "effect"
import * as ApprovalCallback from "../../src/layers/ApprovalCallback.js"
import * as ApprovalScripted from "../../src/testing/ApprovalScripted.js"
import { Approval } from "../../src/services/Approval.js"

const escalation = (callId: string): Approval.Request => ({
  session: { id: "session-1", cwd: "/work" },
  toolName: "bash",
  callId,
  reason: "The build writes to the workspace.",
  command: "npm run build",
  mode: "workspace-write"
})

const ask = (request: Approval.Request) => Effect.flatMap(Approval, (approval) => approval.request(request))

const answerWith = (layer: Layer.Layer<Approval>) => Effect.provide(ask(escalation("call-1")), layer)

/** A host that never answers; `asked` completes with the signal it was handed. */
const hostThatNeverAnswers = Effect.map(Deferred.make<AbortSignal>(), (asked) => {
  const ask: ApprovalCallback.Ask = (_request, signal) => {
    Deferred.unsafeDone(asked, Effect.succeed(signal))
    return new Promise<Approval.Outcome>(() => {})
  }
  return { ask, asked }
})

describe("ApprovalCallback", () => {
  it.effect("passes the request to the host and returns its answer, from a Promise or an Effect", () =>
    Effect.gen(function*() {
      const seen: Array<Approval.Request> = []
      const outcomes: ReadonlyArray<Approval.Outcome> = ["allowed-once", "rejected", "cancelled", "unavailable"]
      for (const outcome of outcomes) {
        const viaPromise: ApprovalCallback.Ask = (request) => {
          seen.push(request)
          return Promise.resolve(outcome)
        }
        expect(yield* answerWith(ApprovalCallback.layer(viaPromise))).toBe(outcome)
        expect(yield* answerWith(ApprovalCallback.layer(() => Effect.succeed(outcome)))).toBe(outcome)
      }
      expect(seen).toEqual(outcomes.map(() => escalation("call-1")))
    }))

  it.effect("counts a throw, a rejection, a failure, a defect or a self-interruption as cancelled", () =>
    Effect.gen(function*() {
      const broken: ReadonlyArray<ApprovalCallback.Ask> = [
        () => {
          throw new Error("prompt crashed")
        },
        () => Promise.reject(new Error("window closed")),
        () => Effect.fail("user closed the dialog"),
        () => Effect.die(new Error("bug in the prompt")),
        () => Effect.interrupt
      ]
      for (const host of broken) expect(yield* answerWith(ApprovalCallback.layer(host))).toBe("cancelled")
    }))

  it.effect("counts an answer that is not an outcome as cancelled", () =>
    Effect.gen(function*() {
      const sloppy = (() => Promise.resolve("yes")) as unknown as ApprovalCallback.Ask
      expect(yield* answerWith(ApprovalCallback.layer(sloppy))).toBe("cancelled")
    }))

  it.effect("no answer within timeoutMs (by the Clock) is cancelled, and the host's prompt is withdrawn", () =>
    Effect.gen(function*() {
      const { ask: silent, asked } = yield* hostThatNeverAnswers
      const fiber = yield* Effect.fork(answerWith(ApprovalCallback.layer(silent, { timeoutMs: 60_000 })))
      const signal = yield* Deferred.await(asked)
      yield* TestClock.adjust(59_999)
      expect(fiber.unsafePoll()).toBeNull()
      yield* TestClock.adjust(1)
      expect(yield* Fiber.join(fiber)).toBe("cancelled")
      expect(signal.aborted).toBe(true)
    }))

  it.effect("aborts the host's signal when the request is interrupted, and propagates the interruption", () =>
    Effect.gen(function*() {
      const { ask: pending, asked } = yield* hostThatNeverAnswers
      const fiber = yield* Effect.fork(answerWith(ApprovalCallback.layer(pending)))
      const signal = yield* Deferred.await(asked)
      expect(signal.aborted).toBe(false)
      const exit = yield* Fiber.interrupt(fiber)
      expect(signal.aborted).toBe(true)
      expect(Exit.isInterrupted(exit)).toBe(true)
    }))
})

describe("ApprovalScripted", () => {
  it.effect("answers in script order, then unavailable, and records every request", () =>
    Effect.gen(function*() {
      const answers = yield* Effect.forEach(["a", "b", "c", "d"], (id) => ask(escalation(id)))
      expect(answers).toEqual(["rejected", "allowed-once", "unavailable", "unavailable"])
      const script = yield* ApprovalScripted.ApprovalScripted
      expect(yield* script.requests).toEqual(["a", "b", "c", "d"].map(escalation))
      expect(yield* script.remaining).toEqual([])
    }).pipe(Effect.provide(ApprovalScripted.layer(["rejected", "allowed-once"]))))

  it.effect("starts with nothing recorded and the whole script remaining", () =>
    Effect.gen(function*() {
      const script = yield* ApprovalScripted.ApprovalScripted
      expect(yield* script.requests).toEqual([])
      expect(yield* script.remaining).toEqual(["cancelled", "allowed-once"])
      expect(yield* ask(escalation("x"))).toBe("cancelled")
      expect(yield* script.remaining).toEqual(["allowed-once"])
    }).pipe(Effect.provide(ApprovalScripted.layer(["cancelled", "allowed-once"]))))
})
