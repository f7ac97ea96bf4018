/**
 * AgentTools is a registry typed by tool name: `call("bash", …)` takes bash's arguments and returns
 * bash's value, a misspelled name is a type error (checked by `tsc`, which covers this file; the four
 * names and their types: test/types/agent-tools-typed-by-name.test-d.ts), and
 * `callUnknown` serves names from the wire. Values decode with each tool's value Schema, so a stored
 * value renders and presents as the live one did.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { expectTypeOf } from "vitest"
import { AgentTools } from "../../src/services/AgentTools.js"
import * as ScriptedBashExecutor from "../../src/testing/ScriptedBashExecutor.js"
import { bashRunResult } from "../../src/testing/ScriptedBashExecutor.js"
import type * as BashTool from "../../src/tool/BashTool.js"
import type * as TaskListTool from "../../src/tool/TaskListTool.js"
import { callContext, compose } from "../support/tools.js"

const ok = { command: "echo hi", description: "Print a greeting" }

describe("AgentTools, typed by tool name", () => {
  it.effect("call(\"bash\", …) returns bash's value, no cast", () =>
    Effect.gen(function*() {
      const tools = yield* AgentTools
      const result = yield* tools.call("bash", ok, callContext())
      expectTypeOf(result).toEqualTypeOf<AgentTools.Result<BashTool.Value>>()
      if (result.isError) return expect.fail(result.message)
      expect(result.value.kind).toBe("foreground")
      if (result.value.kind === "foreground") expect(result.value.stdout.text).toBe("echo hi\n")
      const listed = yield* tools.call("task_list", {}, callContext())
      expectTypeOf(listed).toEqualTypeOf<AgentTools.Result<TaskListTool.Value>>()
      expect(listed).toMatchObject({ isError: false, value: { tasks: [] } })
    }).pipe(Effect.provide(compose({ executor: ScriptedBashExecutor.layer() }))))

  it.effect("a misspelled name or another tool's arguments do not type-check", () =>
    Effect.gen(function*() {
      const tools = yield* AgentTools
      // @ts-expect-error there is no tool "bahs"
      const misspelled = yield* tools.call("bahs", ok, callContext())
      expect(misspelled).toMatchObject({ isError: true, message: "unknown tool \"bahs\"" })
      // @ts-expect-error bash takes a command and a description, not a task id
      const wrong = yield* tools.call("bash", { task_id: "bash-1" }, callContext())
      expect(wrong).toMatchObject({ isError: true, message: "invalid command: expected a non-empty string" })
    }).pipe(Effect.provide(compose({ executor: ScriptedBashExecutor.layer() }))))

  it.effect("typed arguments are checked like the model's: the exact message, nothing runs", () =>
    Effect.gen(function*() {
      const tools = yield* AgentTools
      expect(yield* tools.call("bash", { ...ok, command: "  " }, callContext())).toMatchObject({
        isError: true,
        message: "invalid command: expected a non-empty string"
      })
      expect(yield* Effect.flatMap(ScriptedBashExecutor.ScriptedBashExecutor, (executor) => executor.calls)).toEqual([])
    }).pipe(Effect.provide(compose({ executor: ScriptedBashExecutor.layer() }))))

  it.effect("callUnknown serves a name from the wire, typed or not", () =>
    Effect.gen(function*() {
      const tools = yield* AgentTools
      const name: string = "bash"
      const result = yield* tools.callUnknown(name, ok, callContext())
      expectTypeOf(result).toEqualTypeOf<AgentTools.Result>()
      expect(result).toMatchObject({ isError: false, text: "echo hi\n" })
      expect(yield* tools.callUnknown("shell", ok, callContext())).toMatchObject({ message: "unknown tool \"shell\"" })
    }).pipe(Effect.provide(compose({ executor: ScriptedBashExecutor.layer() }))))
})

describe("stored values decode with the tool's value Schema", () => {
  it.effect("a JSON round trip (undefined members gone) renders and presents as the live value", () =>
    Effect.gen(function*() {
      const tools = yield* AgentTools
      const descriptor = (name: string) => tools.tools.find((tool) => tool.name === name)!
      // A session-less task: its snapshot's owner is undefined, which JSON drops.
      const started = yield* tools.call("bash", { ...ok, run_in_background: true }, callContext())
      const read = yield* tools.call("task_output", { task_id: "bash-1", wait: false }, callContext())
      const listed = yield* tools.call("task_list", {}, callContext())
      const ran = yield* tools.call("bash", ok, callContext())
      for (const [name, result] of [["bash", started], ["task_output", read], ["task_list", listed], ["bash", ran]] as const) {
        if (result.isError) return expect.fail(result.message)
        const stored: unknown = JSON.parse(JSON.stringify(result.value))
        expect(descriptor(name).render(stored), name).toBe(result.text)
        expect(descriptor(name).presentResult(ok, stored), name).toEqual(descriptor(name).presentResult(ok, result.value))
      }
      if (read.isError) return
      expect(Object.keys(JSON.parse(JSON.stringify(read.value.task)))).not.toContain("owner")
    }).pipe(Effect.provide(compose({ executor: ScriptedBashExecutor.layer() }))))

  it.effect("a value that does not decode renders as text and presents as its call", () =>
    Effect.gen(function*() {
      const bash = (yield* AgentTools).tools[0]!
      expect(bash.render({ kind: "foreground" })).toBe("[object Object]")
      expect(bash.presentResult(ok, { kind: "foreground" })).toEqual(bash.presentCall(ok))
    }).pipe(Effect.provide(compose({ executor: ScriptedBashExecutor.layer() }))))
})

describe("a defect while rendering", () => {
  // A broken executor's result: a stream whose text is no string.
  const broken = bashRunResult({ stdout: JSON.parse("{\"text\":42,\"truncated\":true}") })

  it.effect("is an internal error result, like any other defect in a tool", () =>
    Effect.gen(function*() {
      const result = yield* (yield* AgentTools).call("bash", ok, callContext())
      expect(result).toMatchObject({ isError: true })
      if (result.isError) expect(result.message).toMatch(/^internal error in bash: /)
    }).pipe(Effect.provide(compose({ executor: ScriptedBashExecutor.layer({ runs: [broken] }) }))))
})
