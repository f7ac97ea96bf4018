import { describe, expect, it } from "@effect/vitest"
import { Context, Deferred, Effect, Fiber, Layer } from "effect"
import * as ApprovalCallback from "../../src/layers/ApprovalCallback.js"
import * as ApprovalScripted from "../../src/testing/ApprovalScripted.js"
import * as FakeConfiningExecutor from "../../src/testing/FakeConfiningExecutor.js"
import type { Approval } from "../../src/services/Approval.js"
import { AgentTools } from "../../src/services/AgentTools.js"
import { escalationHint } from "../../src/tool/sandboxNotices.js"
import { callTool, compose, composeWith, textOf, withTasks } from "../support/tools.js"

const workspace = "/work/space"
const session = { id: "s-esc", cwd: "/work/space" }
const outside = { command: "echo x > /etc/forbidden", description: "Write outside the workspace" }
const escalated = (mode: string) => ({ ...outside, sandbox_permissions: mode, justification: "It must edit /etc." })

const confinedExecutor = (mode?: "read-only") =>
  FakeConfiningExecutor.layer({ workspaceRoot: workspace, cwd: workspace, ...(mode ? { sandboxMode: mode } : {}) })

/** The tools over the confining executor, with no approval channel. */
const confined = () => compose({ executor: confinedExecutor() })

/** The tools over the confining executor, with an approval channel that answers `approval` in order. */
const asking = (approval: ReadonlyArray<Approval.Outcome>, mode?: "read-only") =>
  composeWith({ executor: confinedExecutor(mode), services: withTasks(ApprovalScripted.layer(approval)) })

const executorCalls = Effect.flatMap(FakeConfiningExecutor.FakeConfiningExecutor, (executor) => executor.calls)
const approvalRequests = Effect.flatMap(ApprovalScripted.ApprovalScripted, (approval) => approval.requests)

/** The signal of the one approval prompt the host was shown. */
class Prompts extends Context.Tag("test/Prompts")<Prompts, Deferred.Deferred<AbortSignal>>() {}

/** A composition whose approval prompt is never answered; `Prompts` yields its signal once asked. */
const pendingApproval = () =>
  Layer.unwrapEffect(Effect.gen(function*() {
    const prompt = yield* Deferred.make<AbortSignal>()
    const host = ApprovalCallback.layer((_request, signal) => {
      Deferred.unsafeDone(prompt, Effect.succeed(signal))
      return new Promise<never>(() => {})
    })
    return Layer.merge(
      composeWith({ executor: FakeConfiningExecutor.layer({ workspaceRoot: workspace, cwd: workspace }), services: withTasks(host) }),
      Layer.succeed(Prompts, prompt)
    )
  }))

describe("sandbox denial as a result fact", () => {
  it.effect("a denied write renders the denial, the escalation hint, then the exit code", () =>
    Effect.gen(function*() {
      expect(yield* textOf("bash", outside, { session })).toBe(
        "[stderr]\nbash: /etc/forbidden: Permission denied\n" +
          "[sandbox: file access denied under workspace-write mode]\n" +
          escalationHint + "\n[exit code: 1]"
      )
      expect(yield* textOf("bash", { command: "echo x > notes.txt", description: "Write inside" }, { session })).toBe(
        "(no output)"
      )
    }).pipe(Effect.provide(asking([]))))
})

describe("escalation is offered only where an approval service can grant it", () => {
  const bashTool = Effect.map(AgentTools, (tools) => tools.tools.find((tool) => tool.name === "bash")!)
  const denial = "[stderr]\nbash: /etc/forbidden: Permission denied\n" +
    "[sandbox: file access denied under workspace-write mode]\n"

  it.effect("without Approval: no escalation fields, no escalation paragraph, no hint after a denial", () =>
    Effect.gen(function*() {
      const bash = yield* bashTool
      expect(Object.keys(bash.parameters.properties)).toEqual([
        "command",
        "description",
        "timeoutMs",
        "workdir",
        "run_in_background"
      ])
      expect(bash.description).not.toContain("sandbox_permissions")
      expect(bash.description).toContain("[sandbox: file access denied under <mode> mode]")
      expect(yield* textOf("bash", outside, { session })).toBe(`${denial}[exit code: 1]`)
      // A background command's denial is read the same way.
      expect(yield* textOf("bash", { ...outside, run_in_background: true }, { session })).toBe(
        "started background task bash-1"
      )
      expect(yield* textOf("task_output", { task_id: "bash-1" }, { session })).toBe(
        `${denial}[status: completed, exit code: 1]`
      )
    }).pipe(Effect.provide(confined())))

  it.effect("with Approval: both fields are published, the description explains them, a denial carries the hint", () =>
    Effect.gen(function*() {
      const bash = yield* bashTool
      expect(Object.keys(bash.parameters.properties)).toEqual([
        "command",
        "description",
        "timeoutMs",
        "workdir",
        "run_in_background",
        "sandbox_permissions",
        "justification"
      ])
      expect(bash.description).toContain("with `sandbox_permissions` set to the narrowest mode that suffices")
      expect(yield* textOf("bash", outside, { session })).toBe(`${denial}${escalationHint}\n[exit code: 1]`)
      expect(yield* textOf("bash", { ...outside, run_in_background: true }, { session })).toBe(
        "started background task bash-1"
      )
      expect(yield* textOf("task_output", { task_id: "bash-1" }, { session })).toBe(
        `${denial}${escalationHint}\n[status: completed, exit code: 1]`
      )
    }).pipe(Effect.provide(asking([]))))
})

describe("escalation refusals: exact messages, nothing executes", () => {
  it.effect("not strictly wider than the current mode: refused without asking anyone", () =>
    Effect.gen(function*() {
      expect(yield* textOf("bash", escalated("workspace-write"), { session })).toBe(
        "Error: sandbox escalation to \"workspace-write\" is not strictly wider than this call's current \"workspace-write\" mode"
      )
      expect(yield* approvalRequests).toEqual([])
      expect(yield* executorCalls).toEqual([])
    }).pipe(Effect.provide(asking(["allowed-once"]))))

  const outcomes: ReadonlyArray<readonly [Approval.Outcome, string]> = [
    ["rejected", "the user rejected escalating this command to \"danger-full-access\""],
    ["cancelled", "approval for escalating to \"danger-full-access\" was cancelled"],
    ["unavailable", "sandbox escalation to \"danger-full-access\" requires approval, but no approval channel is available"]
  ]
  for (const [outcome, message] of outcomes) {
    it.effect(outcome, () =>
      Effect.gen(function*() {
        expect(yield* textOf("bash", escalated("danger-full-access"), { session })).toBe(`Error: ${message}`)
        expect((yield* approvalRequests).length).toBe(1)
        expect(yield* executorCalls).toEqual([])
      }).pipe(Effect.provide(asking([outcome]))))
  }

  it.effect("no approval service composed", () =>
    Effect.gen(function*() {
      expect(yield* textOf("bash", escalated("danger-full-access"), { session })).toBe(
        "Error: sandbox escalation to \"danger-full-access\" requires approval, but no approval service is composed"
      )
      expect(yield* executorCalls).toEqual([])
    }).pipe(Effect.provide(confined())))
})

describe("allowed-once", () => {
  it.effect("widens exactly one call; the next call is back at the executor's default mode", () =>
    Effect.gen(function*() {
      expect(yield* textOf("bash", escalated("danger-full-access"), { session, callId: "esc-1" })).toBe("(no output)")
      expect(yield* approvalRequests).toEqual([{
        session,
        toolName: "bash",
        callId: "esc-1",
        reason: "It must edit /etc.",
        command: "echo x > /etc/forbidden",
        mode: "danger-full-access",
        workdir: "/work/space",
        background: false,
        timeoutMs: 120_000
      }])
      expect(yield* textOf("bash", outside, { session })).toContain(
        "[sandbox: file access denied under workspace-write mode]"
      )
      const modes = (yield* executorCalls).map((call) => call.spec.sandboxPolicy?.mode)
      expect(modes).toEqual(["danger-full-access", "workspace-write"])
      expect((yield* approvalRequests).length).toBe(1)
    }).pipe(Effect.provide(asking(["allowed-once", "allowed-once"]))))

  it.effect("from read-only, workspace-write is wider and can be granted", () =>
    Effect.gen(function*() {
      const inside = { command: "echo x > notes.txt", description: "Write a note" }
      expect(yield* textOf("bash", inside, { session })).toContain("[sandbox: file access denied under read-only mode]")
      expect(
        yield* textOf("bash", { ...inside, sandbox_permissions: "workspace-write", justification: "Save the note." }, {
          session
        })
      ).toBe("(no output)")
      expect((yield* executorCalls).map((call) => call.spec.sandboxPolicy?.mode)).toEqual(["read-only", "workspace-write"])
    }).pipe(Effect.provide(asking(["allowed-once"], "read-only"))))

  it.effect("a granted background call starts under the granted mode", () =>
    Effect.gen(function*() {
      expect(
        yield* textOf("bash", { ...escalated("danger-full-access"), run_in_background: true }, { session })
      ).toBe("started background task bash-1")
      const calls = yield* executorCalls
      expect(calls.map((call) => [call.op, call.spec.sandboxPolicy?.mode])).toEqual([["start", "danger-full-access"]])
      // A task has no time limit: the question says background, and carries no timeout.
      const [asked] = yield* approvalRequests
      expect([asked?.workdir, asked?.background, asked?.timeoutMs]).toEqual(["/work/space", true, undefined])
    }).pipe(Effect.provide(asking(["allowed-once"]))))

  it.effect("the question carries where and how the command would run: the resolved workdir and timeout", () =>
    Effect.gen(function*() {
      yield* textOf("bash", { ...escalated("danger-full-access"), workdir: "../elsewhere/x", timeoutMs: 999_999_999 }, {
        session
      })
      yield* textOf("bash", { ...escalated("danger-full-access"), workdir: "/etc", timeoutMs: 5_000 }, { session })
      const asked = (yield* approvalRequests).map((request) => [request.workdir, request.background, request.timeoutMs])
      // Relative to the workspace root, made absolute; the timeout as capped by the executor.
      expect(asked).toEqual([["/work/elsewhere/x", false, 600_000], ["/etc", false, 5_000]])
      // What was shown is what ran.
      expect((yield* executorCalls).map((call) => [call.spec.workdir, call.spec.timeoutMs])).toEqual(asked.map(([workdir, , timeoutMs]) => [workdir, timeoutMs]))
    }).pipe(Effect.provide(asking(["allowed-once", "allowed-once"]))))

  it.effect("aborting the call while the user is asked withdraws the prompt and runs nothing", () =>
    Effect.gen(function*() {
      const prompt = yield* Prompts
      const controller = new AbortController()
      const calling = yield* Effect.fork(
        callTool("bash", escalated("danger-full-access"), { session, signal: controller.signal })
      )
      const withdrawn = yield* Deferred.await(prompt)
      expect(withdrawn.aborted).toBe(false)
      controller.abort()
      expect((yield* Fiber.join(calling)).text).toBe("Error: command aborted")
      expect(withdrawn.aborted).toBe(true)
      expect(yield* executorCalls).toEqual([])
    }).pipe(Effect.provide(pendingApproval())))

  it.effect("a background call is escalated the same way, before anything starts", () =>
    Effect.gen(function*() {
      expect(
        yield* textOf("bash", { ...escalated("danger-full-access"), run_in_background: true }, { session })
      ).toBe("Error: the user rejected escalating this command to \"danger-full-access\"")
      expect(yield* executorCalls).toEqual([])
    }).pipe(Effect.provide(asking(["rejected"]))))
})
