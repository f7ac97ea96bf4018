/**
 * The executor's spans: made when a tracer is installed, skipped (with their per-call cost) while
 * Effect's built-in tracer, which nobody reads, is the current one.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Tracer } from "effect"
import * as LocalBashExecutor from "../src/layers/LocalBashExecutor.js"
import { whenTraced } from "../src/services/whenTraced.js"
import { BashExecutor } from "../src/services/BashExecutor.js"

const recordingTracer = () => {
  const builtIn = Effect.runSync(Effect.tracer)
  const spans: Array<Tracer.Span> = []
  const tracer = Tracer.make({
    span: (...args) => {
      const span = builtIn.span(...args)
      spans.push(span)
      return span
    },
    context: (f, fiber) => builtIn.context(f, fiber)
  })
  return { tracer, spans }
}

describe("executor spans", () => {
  it("whenTraced picks the untraced operation under the built-in tracer only", () =>
    Effect.gen(function*() {
      const pick = whenTraced(() => Effect.succeed("traced"), () => Effect.succeed("untraced"))
      expect(yield* pick()).toBe("untraced")
      expect(yield* Effect.withTracer(pick(), recordingTracer().tracer)).toBe("traced")
    }).pipe(Effect.runPromise))

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
