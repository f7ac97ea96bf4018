/**
 * The executor's spans are skipped (with their per-call cost) while Effect's built-in tracer, which
 * nobody reads, is the current one. That they are made when a tracer is installed is checked against
 * a real run in test/process/executor-spans.test.ts.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { whenTraced } from "../../src/services/internal/whenTraced.js"
import { recordingTracer } from "../support/tracing.js"

describe("executor spans", () => {
  it("whenTraced picks the untraced operation under the built-in tracer only", () =>
    Effect.gen(function*() {
      const pick = whenTraced(() => Effect.succeed("traced"), () => Effect.succeed("untraced"))
      expect(yield* pick()).toBe("untraced")
      expect(yield* Effect.withTracer(pick(), recordingTracer().tracer)).toBe("traced")
    }).pipe(Effect.runPromise))
})
