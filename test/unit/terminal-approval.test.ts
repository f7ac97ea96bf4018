/**
 * The terminal approval of `effect-bash run`, through an injected terminal: the question, the
 * answers, the Clock's bound, and when `run` asks at all.
 */
import { describe, expect, it } from "@effect/vitest"
import { Deferred, Effect, Fiber, TestClock } from "effect"
import { asksOnTerminal } from "../../src/cli/runCommand.js"
import * as TerminalApproval from "../../src/cli/terminalApproval.js"
import type { Approval } from "../../src/services/Approval.js"

const request: Approval.Request = {
  toolName: "bash",
  callId: "cli-run",
  reason: "The report goes to the workspace.",
  command: "make report > out.txt",
  mode: "danger-full-access"
}

/** A terminal that answers with the next of `answers` and records the questions. */
const scripted = (answers: Array<() => Promise<string | undefined>>) => {
  const questions: Array<string> = []
  const terminal: TerminalApproval.TerminalPort = {
    ask: (question) => {
      questions.push(question)
      return answers.shift()!()
    }
  }
  return { terminal, questions }
}

describe("TerminalApproval", () => {
  it.effect("asks with the justification and `allow escalation to <mode> for: <command>? [y/N]`; y/yes allow once", () =>
    Effect.gen(function*() {
      const typed = ["y", "YES", " yes ", "n", "", "yep", undefined]
      const { questions, terminal } = scripted(typed.map((line) => () => Promise.resolve(line)))
      const approval = TerminalApproval.make(terminal, { timeoutMs: 60_000 })
      const outcomes: Array<Approval.Outcome> = []
      for (let i = 0; i < typed.length; i++) outcomes.push(yield* approval.request(request))
      expect(outcomes).toEqual(["allowed-once", "allowed-once", "allowed-once", "rejected", "rejected", "rejected", "cancelled"])
      expect(questions[0]).toBe(
        "effect-bash: a sandbox escalation is requested: The report goes to the workspace.\n" +
          "allow escalation to danger-full-access for: make report > out.txt? [y/N] "
      )
    }))

  it.effect("no terminal to ask on is an unavailable channel", () =>
    Effect.gen(function*() {
      const { terminal } = scripted([() => Promise.reject(new Error("ENXIO: no such device or address, open '/dev/tty'"))])
      expect(yield* TerminalApproval.make(terminal, { timeoutMs: 1000 }).request(request)).toBe("unavailable")
    }))

  it.effect("no answer within the timeout (by the Clock) cancels and withdraws the question", () =>
    Effect.gen(function*() {
      const signals = yield* Deferred.make<AbortSignal>()
      const terminal: TerminalApproval.TerminalPort = {
        ask: (_question, signal) => {
          Deferred.unsafeDone(signals, Effect.succeed(signal))
          return new Promise(() => {})
        }
      }
      const fiber = yield* Effect.fork(TerminalApproval.make(terminal, { timeoutMs: 3000 }).request(request))
      const signal = yield* Deferred.await(signals)
      yield* TestClock.adjust(2999)
      expect(fiber.unsafePoll()).toBeNull()
      expect(signal.aborted).toBe(false)
      yield* TestClock.adjust(1)
      expect(yield* Fiber.join(fiber)).toBe("cancelled")
      expect(signal.aborted).toBe(true)
    }))

  it("run asks when stdin and stderr are terminals, or with --approve-prompt", () => {
    expect(asksOnTerminal(false, { stdin: true, stderr: true })).toBe(true)
    expect(asksOnTerminal(false, { stdin: false, stderr: true })).toBe(false)
    expect(asksOnTerminal(false, { stdin: true, stderr: false })).toBe(false)
    expect(asksOnTerminal(true, { stdin: false, stderr: false })).toBe(true)
  })
})
