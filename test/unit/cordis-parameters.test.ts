/**
 * Our JSON Schema parameters in the harness's dialect: the converted map compiles (with the
 * harness's own compiler) to exactly what we publish, stays inside its supported subset, and keeps
 * every property, type, description, enum and requiredness.
 */
import {
  assertSupportedJsonSchema,
  parameterSchemaSpecToJsonSchema,
  type ParameterSchemaSpec,
  validateArgs
} from "@deepseek-ai/dsh-tools"
import { Effect, Layer } from "effect"
import { describe, expect, it } from "vitest"
import { compileHarnessParameters, toHarnessParameterMap, toHarnessParameters } from "../../src/cordis/deepseek/harnessParameters.js"
import * as BashEnvRegistryLive from "../../src/layers/BashEnvRegistryLive.js"
import * as ApprovalScripted from "../../src/testing/ApprovalScripted.js"
import * as FakeConfiningExecutor from "../../src/testing/FakeConfiningExecutor.js"
import * as TasksLive from "../../src/layers/TasksLive.js"
import { AgentTools } from "../../src/services/AgentTools.js"
import * as AgentToolsLive from "../../src/tool/AgentToolsLive.js"

const descriptors = Effect.runPromise(
  Effect.scoped(
    Layer.build(
      AgentToolsLive.layer().pipe(
        Layer.provide(
          Layer.mergeAll(FakeConfiningExecutor.layer(), BashEnvRegistryLive.layer(), TasksLive.layer(), ApprovalScripted.layer([]))
        )
      )
    ).pipe(Effect.map((context) => Effect.runSync(Effect.provide(AgentTools, context)).tools))
  )
)

const asSpec = (map: ReturnType<typeof toHarnessParameterMap>) => map as unknown as ParameterSchemaSpec

describe("harness parameters", () => {
  it("of every tool compile identically with the harness's own compiler and stay in its subset", async () => {
    const tools = await descriptors
    expect(tools.map((tool) => tool.name)).toEqual(["bash", "task_output", "task_list", "task_kill"])
    for (const tool of tools) {
      const map = toHarnessParameterMap(tool.parameters)
      const published = toHarnessParameters(tool.parameters)
      expect(published).toStrictEqual(parameterSchemaSpecToJsonSchema(asSpec(map)))
      expect(() => assertSupportedJsonSchema(published as never)).not.toThrow()
      expect(Object.keys(published["properties"] as object)).toEqual(Object.keys(tool.parameters.properties))
      expect(published["required"]).toEqual(tool.parameters.required)
    }
  })

  it("keep the bash tool's types, descriptions and escalation enum", async () => {
    const bash = (await descriptors).find((tool) => tool.name === "bash")!
    const map = toHarnessParameterMap(bash.parameters)
    const source = bash.parameters.properties as Record<string, { description?: string }>
    expect(map["command"]).toEqual({ type: "string", description: source["command"]?.description, required: true })
    expect(map["timeoutMs"]).toEqual({ type: "number", description: source["timeoutMs"]?.description })
    expect(map["run_in_background"]).toMatchObject({ type: "boolean" })
    expect(map["sandbox_permissions"]).toMatchObject({
      type: "string",
      enum: ["workspace-write", "danger-full-access"]
    })
    expect(validateArgs(asSpec(map), { command: "ls", description: "list the files here" })).toEqual([])
  })

  it("map literal unions to enums, drop unsupported keywords and keep nested structure", () => {
    const parameters: AgentTools.JsonSchema = {
      type: "object",
      properties: {
        mode: { anyOf: [{ type: "string", enum: ["a"] }, { type: "string", enum: ["b"] }], description: "pick" },
        name: { type: "string", minLength: 1, pattern: "^x" },
        count: { type: ["integer", "null"] },
        tags: { type: "array", items: { type: "string", maxLength: 3 } },
        options: { type: "object", properties: { deep: { type: "boolean" } }, required: ["deep"], additionalProperties: false },
        anything: { $ref: "#/$defs/Thing" }
      },
      required: ["mode"],
      additionalProperties: false
    }
    const map = toHarnessParameterMap(parameters)
    expect(map).toEqual({
      mode: { type: "string", description: "pick", enum: ["a", "b"], required: true },
      name: { type: "string" },
      count: { oneOf: [{ type: "integer" }, { type: "null" }] },
      tags: { type: "array", items: { type: "string" } },
      options: { type: "object", properties: { deep: { type: "boolean", required: true } }, additionalProperties: false },
      anything: { type: "json" }
    })
    const compiled = compileHarnessParameters(map)
    expect(compiled).toStrictEqual(parameterSchemaSpecToJsonSchema(asSpec(map)))
    expect(() => assertSupportedJsonSchema(compiled as never)).not.toThrow()
  })
})
