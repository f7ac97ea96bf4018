/**
 * The executor's spans, made when a tracer is installed, over a real run.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import * as LocalBashExecutor from "../../src/layers/LocalBashExecutor.js"
import { BashExecutor } from "../../src/services/BashExecutor.js"
import { recordingTracer } from "../support/tracing.js"

describe("executor spans", () => {
  it.live("resolve and run are spans, run annotated with its timeout, when a tracer is installed", () =>
    Effect.gen(function*() {
      const { spans, tracer } = recordingTracer()
      const bash = yield* BashExecutor
      yield* Effect.withTracer(Effect.flatMap(bash.resolve({ command: "true", timeoutMs: 5_000 }), bash.run), tracer)
      const run = spans.find((span) => span.name === "BashExecutor.run")
      expect(spans.map((span) => span.name)).toContain("BashExecutor.resolve")
      expect(run?.attributes.get("timeoutMs")).toBe(5_000)
    }).pipe(Effect.provide(LocalBashExecutor.layer())))
})
