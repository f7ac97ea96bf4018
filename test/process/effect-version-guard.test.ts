/**
 * The library entries check the app's `effect` before linking against it (`src/effectGuard.ts`,
 * `scripts/build-entries.mjs`): an app whose `effect` is another major line, or missing, learns that
 * from the error, not from an `ERR_MODULE_NOT_FOUND` of one of Effect 3's files. The package here is a
 * copy of the built one (`package.json` and `dist/src/`) in an app of this test's own.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { cleanEnv, cliPath, runNode } from "../support/cli.js"

const root = join(cliPath, "..", "..", "..")

/** An app with a copy of the built package and, when `effectVersion` is given, an `effect` of that version. */
const app = (effectVersion: string | undefined) =>
  Effect.acquireRelease(
    Effect.sync(() => {
      const directory = mkdtempSync(join(tmpdir(), "effect-bash-guard-"))
      const installed = join(directory, "node_modules", "effect-bash")
      mkdirSync(join(installed, "dist"), { recursive: true })
      cpSync(join(root, "package.json"), join(installed, "package.json"))
      cpSync(join(root, "dist", "src"), join(installed, "dist", "src"), { recursive: true })
      if (effectVersion !== undefined) {
        const effect = join(directory, "node_modules", "effect")
        mkdirSync(join(effect, "dist"), { recursive: true })
        // Effect 4's layout: no `dist/Either.js`, which Effect 3's modules (and so this package's) import.
        writeFileSync(join(effect, "package.json"), JSON.stringify({
          name: "effect",
          version: effectVersion,
          type: "module",
          exports: { "./package.json": "./package.json", ".": "./dist/index.js", "./*": "./dist/*.js" }
        }))
        writeFileSync(join(effect, "dist", "index.js"), "export const version = 4\n")
      }
      writeFileSync(join(directory, "package.json"), JSON.stringify({ name: "app", private: true, type: "module" }))
      return directory
    }),
    (directory) => Effect.sync(() => rmSync(directory, { recursive: true, force: true }))
  )

const importIn = (directory: string, entry: string) =>
  Effect.promise(() =>
    runNode([
      "--input-type=module",
      "-e",
      `import(${JSON.stringify(entry)}).then(() => console.log("imported"), (error) => console.log(error.message))`
    ], { env: cleanEnv(), cwd: directory })
  )

describe("the library entries' check of effect", () => {
  it.scopedLive("an app on Effect 4 is told the version it has, by every library entry", () =>
    Effect.gen(function*() {
      const directory = yield* app("4.1.5")
      for (const entry of ["effect-bash", "effect-bash/testing", "effect-bash/docker"]) {
        const outcome = yield* importIn(directory, entry)
        expect(outcome.stdout, entry).toContain(
          "effect-bash is built on Effect 3 and needs effect 3.x from 3.22.2, but this app has effect@4.1.5 (Effect 4)"
        )
        expect(outcome.stdout, entry).toContain("effect-bash/promise")
      }
    }))

  it.scopedLive("an app on an older 3.x is told the version it has", () =>
    Effect.gen(function*() {
      const directory = yield* app("3.10.0")
      expect((yield* importIn(directory, "effect-bash")).stdout).toContain("but this app has effect@3.10.0:")
    }))

  it.scopedLive("an app without effect is told it is missing", () =>
    Effect.gen(function*() {
      const directory = yield* app(undefined)
      expect((yield* importIn(directory, "effect-bash")).stdout).toContain(
        "effect-bash needs its peer dependency effect (3.x, from 3.22.2), which is not installed"
      )
    }))
})
