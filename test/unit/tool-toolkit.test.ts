import { Tool } from "@effect/ai"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Option } from "effect"
import * as FakeConfiningExecutor from "../../src/testing/FakeConfiningExecutor.js"
import * as ScriptedBashExecutor from "../../src/testing/ScriptedBashExecutor.js"
import { SessionPersistence } from "../../src/services/SessionPersistence.js"
import { Tasks } from "../../src/services/Tasks.js"
import { AgentTools, ToolError } from "../../src/services/AgentTools.js"
import { CurrentToolSession } from "../../src/services/CurrentToolSession.js"
import * as BashToolkit from "../../src/tool/BashToolkit.js"
import type { Composition } from "../support/tools.js"
import { compose, composeWith, composeWithApproval, dshHome, withTasks } from "../support/tools.js"

const withToolkit = <X>(composition: Omit<Composition<X, never>, "services">) =>
  BashToolkit.layer.pipe(Layer.provideMerge(compose(composition)))

const recorded = Effect.flatMap(ScriptedBashExecutor.ScriptedBashExecutor, (executor) => executor.calls)
const publishedKeys = (toolkit: BashToolkit.BashToolkit["Type"]) =>
  Object.keys((Tool.getJsonSchema(toolkit.tools["bash"]!) as { readonly properties: object }).properties)
const ok = { command: "echo hi", description: "Print a greeting" }

describe("BashToolkit", () => {
  it.effect("publishes the composed tools with exactly their AgentTools JSON Schemas", () =>
    Effect.gen(function*() {
      const toolkit = yield* BashToolkit.BashToolkit
      const tools = yield* AgentTools
      expect(Object.keys(toolkit.tools)).toEqual(["bash", "task_output", "task_list", "task_kill"])
      for (const descriptor of tools.tools) {
        const tool = toolkit.tools[descriptor.name]!
        expect(Tool.getJsonSchema(tool)).toEqual(descriptor.parameters)
        expect(tool.description).toBe(descriptor.description)
      }
      expect(publishedKeys(toolkit)).not.toContain("run_in_background")
    }).pipe(Effect.provide(withToolkit({ executor: ScriptedBashExecutor.layer(), enableRunInBackground: false }))))

  it.effect("a confining executor's escalation fields reach the published schema", () =>
    Effect.gen(function*() {
      const toolkit = yield* BashToolkit.BashToolkit
      expect(publishedKeys(toolkit)).toContain("sandbox_permissions")
    }).pipe(Effect.provide(
      BashToolkit.layer.pipe(Layer.provideMerge(composeWithApproval({ executor: FakeConfiningExecutor.layer() })))
    )))

  it.effect("a valid call returns the rendered text", () =>
    Effect.gen(function*() {
      const toolkit = yield* BashToolkit.BashToolkit
      const result = yield* toolkit.handle("bash", ok)
      expect(result).toMatchObject({ isFailure: false, result: "echo hi\n", encodedResult: "echo hi\n" })
    }).pipe(Effect.provide(withToolkit({ executor: ScriptedBashExecutor.layer() }))))

  it.effect("invalid arguments come back as a failure result with the exact message, not an AiError", () =>
    Effect.gen(function*() {
      const toolkit = yield* BashToolkit.BashToolkit
      const cases: ReadonlyArray<readonly [unknown, string]> = [
        [{ description: "x" }, "invalid command: expected a non-empty string"],
        [{ command: 42, description: "x" }, "invalid command: expected a non-empty string"],
        [{ ...ok, timeoutMs: "soon" }, "invalid timeoutMs: expected a positive number, got \"soon\""],
        [{ ...ok, run_in_background: true }, "run_in_background is disabled for this deployment: run the command in the foreground"],
        [
          { ...ok, sandbox_permissions: "danger-full-access", justification: "x" },
          "sandbox_permissions is not available in this composition (no sandboxing executor to escalate)"
        ]
      ]
      for (const [params, message] of cases) {
        const result = yield* toolkit.handle("bash", params as never)
        expect(result.isFailure).toBe(true)
        expect(result.result).toEqual(new ToolError({ message }))
        expect(result.encodedResult).toEqual({ _tag: "ToolError", message })
      }
      expect(yield* recorded).toEqual([])
    }).pipe(Effect.provide(withToolkit({ executor: ScriptedBashExecutor.layer(), enableRunInBackground: false }))))

  it.effect("task tool failures are returned too", () =>
    Effect.gen(function*() {
      const toolkit = yield* BashToolkit.BashToolkit
      const result = yield* toolkit.handle("task_output", { task_id: "bash-5", wait: false } as never)
      expect(result).toMatchObject({ isFailure: true, encodedResult: { _tag: "ToolError", message: "unknown task bash-5" } })
    }).pipe(Effect.provide(withToolkit({ executor: ScriptedBashExecutor.layer() }))))

  it.effect("call ids are unique per call and across toolkits, so records of two runs never share one", () =>
    Effect.gen(function*() {
      const callIds: Array<string> = []
      const capture = Layer.succeed(SessionPersistence, {
        locate: () => Effect.succeed(Option.none()),
        record: (record) => Effect.sync(() => callIds.push(record.callId)),
        replay: () => Effect.succeed([])
      })
      const run = Effect.flatMap(BashToolkit.BashToolkit, (toolkit) => Effect.repeatN(toolkit.handle("bash", ok), 1)).pipe(
        Effect.provideService(CurrentToolSession, { id: "agent-7" }),
        Effect.provide(BashToolkit.layer.pipe(
          Layer.provideMerge(composeWith({ executor: ScriptedBashExecutor.layer(), services: withTasks(capture) }))
        ))
      )
      yield* run
      yield* run
      expect(callIds).toHaveLength(4)
      expect(new Set(callIds).size).toBe(4)
    }))

  it.effect("extra keys are dropped and the request-level session reaches the managed environment", () =>
    Effect.gen(function*() {
      const toolkit = yield* BashToolkit.BashToolkit
      yield* toolkit.handle("bash", { ...ok, env: { A: "1" }, stdin: "x", stdoutMaxBytes: 1 } as never).pipe(
        Effect.provideService(CurrentToolSession, { id: "agent-7" })
      )
      const [call] = yield* recorded
      expect(Object.keys(call!.spec).sort()).toEqual(["command", "dshEnv", "stdoutMaxBytes", "timeoutMs", "workdir"])
      expect(call!.spec.stdoutMaxBytes).toBe(64_000)
      expect(call!.spec.dshEnv).toEqual({ DSH_HOME: dshHome, DSH_SESSION_ID: "agent-7", DSH_SHELL: "1" })
    }).pipe(Effect.provide(withToolkit({ executor: ScriptedBashExecutor.layer() }))))

  it.effect("completion notices of the session's finished tasks follow the next successful result, once", () =>
    Effect.gen(function*() {
      const toolkit = yield* BashToolkit.BashToolkit
      const inSession = Effect.provideService(CurrentToolSession, { id: "agent-7" })
      const started = yield* toolkit.handle("bash", { ...ok, run_in_background: true } as never).pipe(inSession)
      expect(started.result).toBe("started background task bash-1")
      const [process] = yield* Effect.flatMap(ScriptedBashExecutor.ScriptedBashExecutor, (executor) => executor.processes)
      yield* process!.finish({ exitCode: 0 })
      yield* Effect.flatMap(Tasks, (tasks) => tasks.wait("bash-1", 60_000, "agent-7"))
      const notice =
        "background task bash-1 (bash: echo hi) finished [status: completed, exit code: 0]. Read its output with task_output."
      let next = yield* toolkit.handle("bash", ok).pipe(inSession)
      // The notice consumer is a fiber of its own: give it the turns it needs (bounded).
      for (let turn = 0; turn < 100 && next.result === "echo hi\n"; turn++) {
        yield* Effect.yieldNow()
        next = yield* toolkit.handle("bash", ok).pipe(inSession)
      }
      // The result ends in a newline: one more makes exactly one blank line before the notice.
      expect(next.result).toBe(`echo hi\n\n${notice}`)
      expect((yield* toolkit.handle("bash", ok).pipe(inSession)).result).toBe("echo hi\n")
    }).pipe(Effect.provide(withToolkit({ executor: ScriptedBashExecutor.layer() }))))

  it.effect("a notice after a result without a final newline is also separated by exactly one blank line", () =>
    Effect.gen(function*() {
      const toolkit = yield* BashToolkit.BashToolkit
      const inSession = Effect.provideService(CurrentToolSession, { id: "agent-7" })
      const background = { ...ok, run_in_background: true } as never
      yield* toolkit.handle("bash", background).pipe(inSession)
      const [process] = yield* Effect.flatMap(ScriptedBashExecutor.ScriptedBashExecutor, (executor) => executor.processes)
      yield* process!.finish({ exitCode: 0 })
      yield* Effect.flatMap(Tasks, (tasks) => tasks.wait("bash-1", 60_000, "agent-7"))
      const notice =
        "background task bash-1 (bash: echo hi) finished [status: completed, exit code: 0]. Read its output with task_output."
      let next = yield* toolkit.handle("bash", background).pipe(inSession)
      // The notice consumer is a fiber of its own: give it the turns it needs (bounded).
      for (let turn = 0; turn < 100 && !String(next.result).includes("bash-1 ("); turn++) {
        yield* Effect.yieldNow()
        next = yield* toolkit.handle("bash", background).pipe(inSession)
      }
      expect(String(next.result).replace(/^started background task bash-\d+/, "")).toBe(`\n\n${notice}`)
    }).pipe(Effect.provide(withToolkit({ executor: ScriptedBashExecutor.layer() }))))
})
