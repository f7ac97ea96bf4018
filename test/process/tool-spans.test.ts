/**
 * The `bash` tool's spans: `AgentTools.call`, `bash.execute`, `bash.placeCall` and
 * `BashEnvRegistry.collect` are made when a tracer is installed, and skipped (with their per-call
 * cost) while Effect's built-in tracer, which nobody reads, is the current one.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Option } from "effect"
import * as LocalBashExecutor from "../../src/layers/LocalBashExecutor.js"
import { BashEnvRegistry } from "../../src/services/BashEnvRegistry.js"
import { callTool, composeWith } from "../support/tools.js"
import { recordingTracer } from "../support/tracing.js"

const tools = composeWith({ executor: Layer.orDie(LocalBashExecutor.layer()), services: Layer.empty })

/** Registers a contributor that notes the span it resolves in, for as long as the test runs. */
const spanAtCollect = Effect.gen(function*() {
  const seen: Array<Option.Option<string>> = []
  const registry = yield* BashEnvRegistry
  yield* registry.register({
    name: "span-probe",
    keys: [{ key: "DSH_SPAN_PROBE", description: "test probe" }],
    resolve: () =>
      Effect.map(Effect.option(Effect.currentSpan), (span) => {
        seen.push(Option.map(span, ({ name }) => name))
        return {}
      })
  })
  return seen
})

describe("bash tool spans", () => {
  it.live("a call is a tree of spans when a tracer is installed", () =>
    Effect.gen(function*() {
      const { spans, tracer } = recordingTracer()
      const seen = yield* spanAtCollect
      const result = yield* Effect.withTracer(
        callTool("bash", { command: "true", description: "a traced call" }, { callId: "traced-1" }),
        tracer
      )
      expect(result.isError).toBe(false)
      const named = (name: string) => spans.find((span) => span.name === name)
      expect(named("AgentTools.call")?.attributes.get("tool.callId")).toBe("traced-1")
      expect(named("bash.execute")?.attributes.get("bash.callId")).toBe("traced-1")
      expect(named("bash.placeCall")).toBeDefined()
      expect(named("BashEnvRegistry.collect")).toBeDefined()
      expect(named("BashExecutor.run")).toBeDefined()
      expect(seen).toEqual([Option.some("BashEnvRegistry.collect")])
    }).pipe(Effect.scoped, Effect.provide(tools)))

  it.live("under the built-in tracer a call makes no span", () =>
    Effect.gen(function*() {
      const seen = yield* spanAtCollect
      const result = yield* callTool("bash", { command: "true", description: "an untraced call" })
      expect(result.isError).toBe(false)
      expect(seen).toEqual([Option.none()])
    }).pipe(Effect.scoped, Effect.provide(tools)))
})
