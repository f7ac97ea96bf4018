/**
 * A resolved spec is branded, so `run` and `start` check nothing again; a spec built by hand does not
 * type-check. Type-level only, so `tsc` is where it can fail: `npm run typecheck` covers test/
 * (tsconfig.json), `npm test` runs it before vitest, and a `@ts-expect-error` whose error disappears
 * is itself an error. Vitest does not run this file. (Untyped callers hand specs in through ctx.bash,
 * which checks them: test/process/cordis-seam.test.ts.)
 */
import { describe, it } from "vitest"
import type { BashExecutor } from "../../src/services/BashExecutor.js"

describe("commands reach the executor resolved", () => {
  it("run and start take only a resolved spec: a hand-built one is a type error", () => {
    const handBuilt = { command: "echo a\0b", workdir: "/tmp", timeoutMs: 10_000, stdoutMaxBytes: 64_000 }
    const calls = (bash: BashExecutor["Type"]) => [
      // @ts-expect-error a spec built by hand carries no brand
      bash.run(handBuilt),
      // @ts-expect-error a spec built by hand carries no brand
      bash.start(handBuilt)
    ]
    void calls
  })
})
