import { describe, expect, it } from "@effect/vitest"
import * as fs from "node:fs"
import * as path from "node:path"

// An `@effect/*` package's barrel (`@effect/platform`, `@effect/cli`, …) loads every module of the package,
// so the library and the CLI import the modules they use (`@effect/platform/FileSystem`). `effect` itself is
// the baseline every Effect app loads, so its barrel is allowed.
const srcDir = path.resolve(import.meta.dirname, "../../src")

const sourceFiles = (dir: string): ReadonlyArray<string> =>
  fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name)
    return entry.isDirectory() ? sourceFiles(full) : entry.name.endsWith(".ts") ? [full] : []
  })

/** Every module specifier of a file: static imports and re-exports, `import("…")` and `import "…"`. */
const specifiers = (text: string): ReadonlyArray<string> =>
  [...text.matchAll(/(?:\bfrom\s*|\bimport\s*\(\s*|\bimport\s+)"([^"]+)"/g)].map((match) => match[1]!)

const isEffectBarrel = (specifier: string) => /^@effect\/[^/]+$/.test(specifier)

describe("barrel imports", () => {
  it("finds the specifiers of every import form", () => {
    const text = [
      `import { FileSystem } from "@effect/platform"`,
      `import type { Tool } from "@effect/ai"`,
      `export * from "@effect/cli"`,
      `const m = await import("@effect/platform-node")`,
      `import "@effect/rpc"`,
      `import * as Path from "@effect/platform/Path"`
    ].join("\n")
    expect(specifiers(text).filter(isEffectBarrel)).toEqual([
      "@effect/platform",
      "@effect/ai",
      "@effect/cli",
      "@effect/platform-node",
      "@effect/rpc"
    ])
  })

  it("no source file imports an @effect/* package's barrel", () => {
    const barrels = sourceFiles(srcDir).flatMap((file) =>
      specifiers(fs.readFileSync(file, "utf8"))
        .filter(isEffectBarrel)
        .map((specifier) => `${path.relative(srcDir, file)} imports "${specifier}"`)
    )
    expect(barrels).toEqual([])
  })
})
