/**
 * A Cordis `Context` is typed by the module augmentation: `ctx.bash`, `ctx.bashEnv` and `ctx.tasks` are
 * the adapter's services, with the reference seam's synchronous signatures. Type-level only, so `tsc`
 * is where it can fail: `npm run typecheck` covers test/ (tsconfig.json), and `npm test` runs it before
 * vitest; vitest does not run this file. The same seam at run time: test/process/cordis-seam.test.ts.
 */
import type { Context } from "@deepseek-ai/cordis"
import { describe, expectTypeOf, it } from "vitest"
import type {} from "../../src/cordis/augment-deepseek.js"
import type { CordisBash, CordisBashEnv, CordisBashProcess, CordisTasks } from "../../src/cordis-adapter.js"
import type { BashExecutor } from "../../src/services/BashExecutor.js"

describe("ctx.bash, the reference's way", () => {
  it("is typed by the augmentation", () => {
    const typed = (ctx: Context) => {
      expectTypeOf(ctx.bash).toEqualTypeOf<CordisBash>()
      expectTypeOf(ctx.bashEnv).toEqualTypeOf<CordisBashEnv>()
      expectTypeOf(ctx.tasks).toEqualTypeOf<CordisTasks>()
      expectTypeOf(ctx.get("bash")).toEqualTypeOf<CordisBash | undefined>()
      expectTypeOf(ctx.bash.resolve).returns.toEqualTypeOf<BashExecutor.Spec>()
      expectTypeOf(ctx.bash.start).returns.toEqualTypeOf<CordisBashProcess>()
      expectTypeOf(ctx.bash.run).returns.toEqualTypeOf<Promise<BashExecutor.RunResult>>()
      expectTypeOf(ctx.bash.ownerOf).returns.toEqualTypeOf<string | undefined>()
    }
    expectTypeOf(typed).toBeFunction()
    expectTypeOf<CordisBashProcess["readOutput"]>().returns.toEqualTypeOf<BashExecutor.OutputRead>()
    expectTypeOf<CordisBashProcess["kill"]>().returns.toEqualTypeOf<boolean>()
    expectTypeOf<CordisBashProcess["done"]>().toEqualTypeOf<Promise<void>>()
  })
})
