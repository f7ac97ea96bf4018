/**
 * One pass into the executor: a `bash` call resolves its request once, and learns the executor's
 * default workdir without resolving a throwaway request.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Ref } from "effect"
import { BashExecutor } from "../src/services/BashExecutor.js"
import { ScriptedBashExecutor } from "../src/testing/ScriptedBashExecutor.js"
import { callTool, compose } from "./tool-support.js"


/** The scripted executor, counting the requests it is asked to resolve. */
const countingResolves = (count: Ref.Ref<number>) =>
  Layer.effect(
    BashExecutor,
    Effect.map(BashExecutor, (executor) => ({
      ...executor,
      resolve: (request: BashExecutor.Request) => Effect.zipRight(Ref.update(count, (n) => n + 1), executor.resolve(request))
    }))
  ).pipe(Layer.provideMerge(ScriptedBashExecutor.layer({ cwd: "/srv/app" })))

describe("one pass into the executor", () => {
  it.effect("a relative workdir without a session is taken from the default workdir, with one resolve", () =>
    Effect.gen(function*() {
      const count = yield* Ref.make(0)
      const outcome = yield* callTool("bash", { command: "pwd", description: "Where", workdir: "sub" }).pipe(
        Effect.zip(Effect.flatMap(ScriptedBashExecutor, (executor) => executor.calls)),
        Effect.provide(compose({ executor: countingResolves(count) }))
      )
      const [result, calls] = outcome
      expect(result.isError).toBe(false)
      expect(calls.map((call) => call.spec.workdir)).toEqual(["/srv/app/sub"])
      expect(yield* Ref.get(count)).toBe(1)
    }))
})
