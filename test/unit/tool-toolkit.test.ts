import { LanguageModel, Prompt, Tool } from "@effect/ai"
import type { Response } from "@effect/ai"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Either, Layer, Option, Schema, Stream } from "effect"
import * as FakeConfiningExecutor from "../../src/testing/FakeConfiningExecutor.js"
import * as ScriptedBashExecutor from "../../src/testing/ScriptedBashExecutor.js"
import { SessionPersistence } from "../../src/services/SessionPersistence.js"
import { Tasks } from "../../src/services/Tasks.js"
import { AgentTools, ToolError } from "../../src/services/AgentTools.js"
import { CurrentToolSession } from "../../src/services/CurrentToolSession.js"
import type { BashExecutor } from "../../src/services/BashExecutor.js"
import type * as BashTool from "../../src/tool/BashTool.js"
import * as BashToolkit from "../../src/tool/BashToolkit.js"
import { strictJsonSchema } from "../../src/tool/internal/strictSchema.js"
import type * as TaskListTool from "../../src/tool/TaskListTool.js"
import type { Composition } from "../support/tools.js"
import { compose, composeWith, composeWithApproval, dshHome, withTasks } from "../support/tools.js"

const withToolkit = <X>(composition: Omit<Composition<X, never>, "services">) =>
  BashToolkit.layer.pipe(Layer.provideMerge(compose(composition)))

const recorded = Effect.flatMap(ScriptedBashExecutor.ScriptedBashExecutor, (executor) => executor.calls)
const confiningCalls = Effect.flatMap(FakeConfiningExecutor.FakeConfiningExecutor, (executor) => executor.calls)
const publishedKeys = (toolkit: BashToolkit.BashToolkit["Type"]) =>
  Object.keys((Tool.getJsonSchema(toolkit.tools["bash"]!) as { readonly properties: object }).properties)
const ok = { command: "echo hi", description: "Print a greeting" }
// The double's default answer to `ok`: its command echoed, under the default timeout.
const echoed = ScriptedBashExecutor.bashRunResult({ stdout: { text: "echo hi\n", truncated: false } })

/** Foreground results and the text the model has always read for each. */
const runs: ReadonlyArray<readonly [BashExecutor.RunResult, string]> = [
  [ScriptedBashExecutor.bashRunResult({ stdout: { text: "hi\n", truncated: false } }), "hi\n"],
  [
    ScriptedBashExecutor.bashRunResult({
      exitCode: 3,
      stdout: { text: "failing\n", truncated: false },
      stderr: { text: "oops\n", truncated: false }
    }),
    "failing\n[stderr]\noops\n[exit code: 3]"
  ],
  [
    ScriptedBashExecutor.bashRunResult({
      exitCode: null,
      signal: "SIGTERM",
      timedOut: true,
      timeoutMs: 300,
      stdout: { text: "start\n", truncated: false }
    }),
    "start\n[timed out after 300ms]\n[killed by signal: SIGTERM]"
  ],
  [
    ScriptedBashExecutor.bashRunResult({
      stdout: { text: "line 9999\nline 10000\n", truncated: true, spillPath: "/tmp/spill/stdout" }
    }),
    "line 9999\nline 10000\n\n[output truncated; full output: /tmp/spill/stdout]"
  ]
]

describe("BashToolkit", () => {
  it.effect("publishes the composed tools with their AgentTools JSON Schemas in strict-mode shape", () =>
    Effect.gen(function*() {
      const toolkit = yield* BashToolkit.BashToolkit
      const tools = yield* AgentTools
      expect(Object.keys(toolkit.tools)).toEqual(["bash", "task_output", "task_list", "task_kill"])
      for (const descriptor of tools.tools) {
        const tool: Tool.Any = toolkit.tools[descriptor.name as AgentTools.Name]
        const published = Tool.getJsonSchemaFromSchemaAst(tool.parametersSchema.ast) as unknown as AgentTools.JsonSchema
        // The same properties, each required; the optional ones nullable, with their descriptions.
        expect(published.required).toEqual(Object.keys(descriptor.parameters.properties))
        expect(published.additionalProperties).toBe(false)
        for (const [key, property] of Object.entries(descriptor.parameters.properties)) {
          const { type, ...rest } = property as { readonly type: string }
          expect(published.properties[key]).toEqual(
            descriptor.parameters.required?.includes(key) ? property : { ...rest, type: [type, "null"] }
          )
        }
        expect(tool.description).toBe(descriptor.description)
      }
      expect(publishedKeys(toolkit)).not.toContain("run_in_background")
    }).pipe(Effect.provide(withToolkit({ executor: ScriptedBashExecutor.layer(), enableRunInBackground: false }))))

  it.effect("strict: false publishes exactly the AgentTools JSON Schemas, and a null there is a wrong value", () =>
    Effect.gen(function*() {
      const toolkit = yield* BashToolkit.BashToolkit
      const tools = yield* AgentTools
      for (const descriptor of tools.tools) {
        const tool: Tool.Any = toolkit.tools[descriptor.name as AgentTools.Name]
        expect(Tool.getJsonSchemaFromSchemaAst(tool.parametersSchema.ast)).toEqual(descriptor.parameters)
      }
      const result = yield* toolkit.handle("bash", { ...ok, timeoutMs: null } as never)
      expect(result.encodedResult).toEqual({ _tag: "ToolError", message: "invalid timeoutMs: expected a positive number, got null" })
    }).pipe(Effect.provide(
      BashToolkit.layerWith({ strict: false }).pipe(Layer.provideMerge(compose({ executor: ScriptedBashExecutor.layer() })))
    )))

  it.effect("null for an optional key is the key not given; other values keep their exact messages", () =>
    Effect.gen(function*() {
      const toolkit = yield* BashToolkit.BashToolkit
      const nulls = { timeoutMs: null, workdir: null, run_in_background: null, sandbox_permissions: null, justification: null }
      const ran = yield* toolkit.handle("bash", { ...ok, ...nulls } as never)
      expect(ran.isFailure).toBe(false)
      const [call] = yield* confiningCalls
      expect(call!.spec).toMatchObject({ timeoutMs: 120_000, workdir: "/srv/app" })
      const waited = yield* toolkit.handle("task_output", { task_id: "bash-5", wait: null, timeout_ms: null } as never)
      expect(waited.encodedResult).toEqual({ _tag: "ToolError", message: "unknown task bash-5" })
      const cases: ReadonlyArray<readonly [unknown, string]> = [
        [{ ...ok, ...nulls, command: null }, "invalid command: expected a non-empty string"],
        [{ ...ok, ...nulls, description: null }, "invalid description: expected a non-empty string"],
        [{ ...ok, ...nulls, timeoutMs: 0 }, "invalid timeoutMs: expected a positive number, got 0"],
        [{ ...ok, ...nulls, timeoutMs: "soon" }, "invalid timeoutMs: expected a positive number, got \"soon\""],
        [{ ...ok, ...nulls, workdir: "" }, "invalid workdir: expected a non-empty string, got \"\""],
        [{ ...ok, ...nulls, justification: "because" }, "invalid escalation: justification is only valid together with sandbox_permissions"],
        [{ ...ok, ...nulls, sandbox_permissions: "workspace-write" }, "invalid escalation: sandbox_permissions requires a justification"],
        [{ ...ok, ...nulls, sandbox_permissions: "root", justification: "because" }, "invalid sandbox_permissions: expected one of \"workspace-write\", \"danger-full-access\", got \"root\""]
      ]
      for (const [params, message] of cases) {
        const result = yield* toolkit.handle("bash", params as never)
        expect(result.encodedResult).toEqual({ _tag: "ToolError", message })
      }
      expect(yield* confiningCalls).toHaveLength(1)
      // An enum stays an enum, with null among its values.
      expect((Tool.getJsonSchema(toolkit.tools.bash) as unknown as AgentTools.JsonSchema).properties["sandbox_permissions"])
        .toMatchObject({ type: ["string", "null"], enum: ["workspace-write", "danger-full-access", null] })
    }).pipe(Effect.provide(
      BashToolkit.layer.pipe(
        Layer.provideMerge(composeWithApproval({ executor: FakeConfiningExecutor.layer({ cwd: "/srv/app" }) }))
      )
    )))

  it.effect("a confining executor's escalation fields reach the published schema", () =>
    Effect.gen(function*() {
      const toolkit = yield* BashToolkit.BashToolkit
      expect(publishedKeys(toolkit)).toContain("sandbox_permissions")
    }).pipe(Effect.provide(
      BashToolkit.layer.pipe(Layer.provideMerge(composeWithApproval({ executor: FakeConfiningExecutor.layer() })))
    )))

  it.effect("a successful call's result is the tool's value and its text; the encoded result is that text", () =>
    Effect.gen(function*() {
      const toolkit = yield* BashToolkit.BashToolkit
      const tools = yield* AgentTools
      for (const [run, text] of runs) {
        const handled = yield* toolkit.handle("bash", ok)
        // The result is typed by the tool's name: a `bash` call's Output carries a `BashTool.Value`.
        const result: BashToolkit.Output<BashTool.Value> | ToolError = handled.result
        expect(handled.isFailure).toBe(false)
        expect(result).toEqual({ value: { kind: "foreground", ...run }, text })
        expect(handled.encodedResult).toBe(text)
        // Every host reads the same text for the same value.
        expect(tools.tools[0]!.render({ kind: "foreground", ...run })).toBe(text)
      }
    }).pipe(Effect.provide(withToolkit({ executor: ScriptedBashExecutor.layer({ runs: runs.map(([run]) => run) }) }))))

  it.effect("the model reads exactly the text through generateText, while the response's parts carry the value", () =>
    Effect.gen(function*() {
      const shown: Array<unknown> = []
      const model = LanguageModel.make({
        // One `bash` call per scripted run, then an answer once it has been shown their results.
        generateText: (options) => {
          const last = options.prompt.content.at(-1)
          if (last?.role !== "tool") {
            return Effect.succeed(runs.map((_, index): Response.PartEncoded => ({
              type: "tool-call",
              id: `call-${index}`,
              name: "bash",
              params: ok
            })))
          }
          for (const part of last.content) shown.push(part.result)
          return Effect.succeed([{ type: "text", text: "done" }])
        },
        streamText: () => Stream.die("the scripted model does not stream")
      })
      const response = yield* LanguageModel.generateText({ prompt: "run", toolkit: BashToolkit.BashToolkit }).pipe(
        Effect.provideServiceEffect(LanguageModel.LanguageModel, model)
      )
      const values = response.toolResults.map((part) =>
        part.name === "bash" && !part.isFailure ? part.result.value : undefined
      )
      expect(values).toEqual(runs.map(([run]) => ({ kind: "foreground", ...run })))
      yield* LanguageModel.generateText({ prompt: Prompt.fromResponseParts(response.content) }).pipe(
        Effect.provideServiceEffect(LanguageModel.LanguageModel, model)
      )
      expect(shown).toEqual(runs.map(([, text]) => text))
    }).pipe(Effect.provide(withToolkit({ executor: ScriptedBashExecutor.layer({ runs: runs.map(([run]) => run) }) }))))

  it.effect("the success Schema is one-way: a model text does not decode back into a value", () =>
    Effect.gen(function*() {
      const toolkit = yield* BashToolkit.BashToolkit
      const decoded = yield* Effect.either(Schema.decodeUnknown(toolkit.tools.bash.successSchema)("echo hi\n"))
      expect(Either.isLeft(decoded)).toBe(true)
      expect(Either.isLeft(decoded) && decoded.left.message).toContain(
        "the model text of a bash result does not decode back into its value"
      )
    }).pipe(Effect.provide(withToolkit({ executor: ScriptedBashExecutor.layer() }))))

  it.effect("each task tool's result carries its value", () =>
    Effect.gen(function*() {
      const toolkit = yield* BashToolkit.BashToolkit
      yield* toolkit.handle("bash", { ...ok, run_in_background: true } as never)
      const listed = yield* toolkit.handle("task_list", {} as never)
      const result: BashToolkit.Output<TaskListTool.Value> | ToolError = listed.result
      expect(result).toMatchObject({ value: { tasks: [{ id: "bash-1", status: "running" }] } })
      expect(listed.encodedResult).toBe("bash-1 [bash] running — echo hi")
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
      expect(started.encodedResult).toBe("started background task bash-1")
      const [process] = yield* Effect.flatMap(ScriptedBashExecutor.ScriptedBashExecutor, (executor) => executor.processes)
      yield* process!.finish({ exitCode: 0 })
      yield* Effect.flatMap(Tasks, (tasks) => tasks.wait("bash-1", 60_000, "agent-7"))
      const notice =
        "background task bash-1 (bash: echo hi) finished [status: completed, exit code: 0]. Read its output with task_output."
      let next = yield* toolkit.handle("bash", ok).pipe(inSession)
      // The notice consumer is a fiber of its own: give it the turns it needs (bounded).
      for (let turn = 0; turn < 100 && next.encodedResult === "echo hi\n"; turn++) {
        yield* Effect.yieldNow()
        next = yield* toolkit.handle("bash", ok).pipe(inSession)
      }
      // The result ends in a newline: one more makes exactly one blank line before the notice.
      // The notice is part of what the model reads, not of the value.
      expect(next.result).toEqual({ value: { kind: "foreground", ...echoed }, text: `echo hi\n\n${notice}` })
      expect(next.encodedResult).toBe(`echo hi\n\n${notice}`)
      expect((yield* toolkit.handle("bash", ok).pipe(inSession)).encodedResult).toBe("echo hi\n")
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
      for (let turn = 0; turn < 100 && !String(next.encodedResult).includes("bash-1 ("); turn++) {
        yield* Effect.yieldNow()
        next = yield* toolkit.handle("bash", background).pipe(inSession)
      }
      expect(String(next.encodedResult).replace(/^started background task bash-\d+/, "")).toBe(`\n\n${notice}`)
    }).pipe(Effect.provide(withToolkit({ executor: ScriptedBashExecutor.layer() }))))
})

describe("strictJsonSchema", () => {
  it("makes nested objects strict too, and a property without one type nullable by anyOf", () => {
    const schema: AgentTools.JsonSchema = {
      type: "object",
      required: ["spec"],
      properties: {
        spec: { type: "object", properties: { a: { type: "string" } }, additionalProperties: true },
        list: { type: "array", items: { type: "object", properties: { b: { type: "number" } } } },
        either: { description: "a or 1", anyOf: [{ type: "string" }, { type: "number" }] },
        date: { description: "when", format: "date" }
      }
    }
    expect(strictJsonSchema(schema)).toEqual({
      type: "object",
      required: ["spec", "list", "either", "date"],
      additionalProperties: false,
      properties: {
        spec: {
          type: "object",
          properties: { a: { type: ["string", "null"] } },
          required: ["a"],
          additionalProperties: false
        },
        list: {
          type: ["array", "null"],
          items: { type: "object", properties: { b: { type: ["number", "null"] } }, required: ["b"], additionalProperties: false }
        },
        either: { description: "a or 1", anyOf: [{ type: "string" }, { type: "number" }, { type: "null" }] },
        date: { description: "when", anyOf: [{ format: "date" }, { type: "null" }] }
      }
    })
  })
})
