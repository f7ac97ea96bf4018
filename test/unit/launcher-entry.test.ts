/**
 * Where the spawner finds the launcher's program: next to the module that starts it, compiled; a
 * TypeScript source's stand-in is its compiled sibling under `dist/`; a missing one is a typed error.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import {
  findLauncherEntry,
  launcherEntryPath,
  LauncherEntryMissing
} from "../../src/layers/internal/spawner/launcherEntry.js"

describe("the launcher's program", () => {
  it("is the compiled module's sibling, or a bundle's", () => {
    expect(launcherEntryPath("file:///pkg/dist/src/layers/internal/spawner/launcherEntry.js"))
      .toBe("/pkg/dist/src/layers/internal/spawner/launcherMain.js")
    expect(launcherEntryPath("file:///app/node_modules/effect-bash/dist/bin/effect-bash.js"))
      .toBe("/app/node_modules/effect-bash/dist/bin/launcherMain.js")
  })

  it("of a TypeScript source is its sibling compiled under dist/", () => {
    expect(launcherEntryPath("file:///work/src/x/src/layers/internal/spawner/launcherEntry.ts"))
      .toBe("/work/src/x/dist/src/layers/internal/spawner/launcherMain.js")
    expect(launcherEntryPath()).toMatch(/\/dist\/src\/layers\/internal\/spawner\/launcherMain\.js$/)
  })

  it.effect("is found where it was built, and a missing one fails naming the path", () =>
    Effect.gen(function*() {
      // The tests run after `npm run build`.
      expect(yield* findLauncherEntry()).toBe(launcherEntryPath())
      const missing = yield* Effect.flip(findLauncherEntry("file:///nowhere/effect-bash/dist/bin/effect-bash.js"))
      expect(missing).toBeInstanceOf(LauncherEntryMissing)
      expect(missing.path).toBe("/nowhere/effect-bash/dist/bin/launcherMain.js")
      expect(missing.message).toContain("the launcher's program is missing at /nowhere/effect-bash/dist/bin/launcherMain.js")
    }))
})
