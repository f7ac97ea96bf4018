import { describe, expect, it } from "@effect/vitest"
import * as fs from "node:fs"
import * as path from "node:path"

// A package's barrel (`effect`, `@effect/platform`, `@effect/cli`, …) loads every module of the package,
// so the library and the CLI import the modules they use (`effect/Effect`, `@effect/platform/FileSystem`).
const srcDir = path.resolve(import.meta.dirname, "../../src")

const sourceFiles = (dir: string): ReadonlyArray<string> =>
  fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name)
    return entry.isDirectory() ? sourceFiles(full) : entry.name.endsWith(".ts") ? [full] : []
  })

/**
 * Every module specifier of a file: static imports and re-exports, `import("…")`, `import "…"` and
 * `require("…")`, in either quotes.
 */
const specifiers = (text: string): ReadonlyArray<string> =>
  [...text.matchAll(/(?:\bfrom\s*|\bimport\s*\(\s*|\bimport\s+|\brequire\s*\(\s*)(["'])([^"']+)\1/g)].map((match) =>
    match[2]!
  )

const isEffectBarrel = (specifier: string) => /^(effect|@effect\/[^/]+)$/.test(specifier)

describe("barrel imports", () => {
  it("finds the specifiers of every import form", () => {
    const text = [
      `import { Effect } from "effect"`,
      `import * as Schema from "effect/Schema"`,
      `import { FileSystem } from "@effect/platform"`,
      `import type { Tool } from "@effect/ai"`,
      `export * from "@effect/cli"`,
      `const m = await import("@effect/platform-node")`,
      `import "@effect/rpc"`,
      `import * as Path from "@effect/platform/Path"`,
      `import { Layer } from 'effect'`,
      `const cli = require("@effect/cli")`
    ].join("\n")
    expect(specifiers(text).filter(isEffectBarrel)).toEqual([
      "effect",
      "@effect/platform",
      "@effect/ai",
      "@effect/cli",
      "@effect/platform-node",
      "@effect/rpc",
      "effect",
      "@effect/cli"
    ])
  })

  it("no source file imports the barrel of effect or of an @effect/* package", () => {
    const barrels = sourceFiles(srcDir).flatMap((file) =>
      specifiers(fs.readFileSync(file, "utf8"))
        .filter(isEffectBarrel)
        .map((specifier) => `${path.relative(srcDir, file)} imports "${specifier}"`)
    )
    expect(barrels).toEqual([])
  })
})
