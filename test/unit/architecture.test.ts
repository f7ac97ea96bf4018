import { describe, expect, it } from "@effect/vitest"
import * as fs from "node:fs"
import * as path from "node:path"

// The import graph runs one way: services ← layers ← tool ← surfaces (the composition root, cordis,
// cli), executor internals stay inside layers/, and the shared helpers of services/internal/ never reach
// the test doubles or the entry points. The generic Cordis plugin imports no harness adapter: the
// DeepSeek harness's (cordis/deepseek/) builds on it, and only the package entry composes the two.
const srcDir = path.resolve(import.meta.dirname, "../../src")

const sourceFiles = (dir: string): ReadonlyArray<string> =>
  fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name)
    return entry.isDirectory() ? sourceFiles(full) : entry.name.endsWith(".ts") ? [full] : []
  })

const relativeImports = (file: string): ReadonlyArray<string> =>
  [...fs.readFileSync(file, "utf8").matchAll(/(?:from|import)\s*\(?\s*"(\.{1,2}\/[^"]+)"/g)].map((match) =>
    path.relative(srcDir, path.resolve(path.dirname(file), match[1]!)).replace(/\.js$/, ".ts")
  )

const room = (file: string): string => {
  if (file.startsWith("layers/internal/")) return "layers/internal"
  if (file.startsWith("services/internal/")) return "services/internal"
  if (file === "layers/resolveSpec.ts") return file
  if (file.startsWith("cordis/deepseek/")) return "cordis/deepseek"
  const top = file.split("/")[0]!
  return top.endsWith(".ts") ? file : top
}

// What each room may import, besides itself.
const allowed: Record<string, ReadonlyArray<string>> = {
  "services/internal": [],
  "services": ["services/internal"],
  "layers/internal": ["services", "services/internal", "layers", "layers/resolveSpec.ts"],
  "layers": ["services", "services/internal", "layers/internal", "layers/resolveSpec.ts"],
  "layers/resolveSpec.ts": ["services", "services/internal", "layers", "layers/internal"],
  "tool": ["services", "services/internal"],
  // A double's `resolve` is the executors' own (layers/resolveSpec.ts), the one producer of the Spec brand.
  "testing": ["services", "index.ts", "layers/resolveSpec.ts"],
  "BashStack.ts": ["services", "layers", "tool"],
  "cordis": ["services", "services/internal", "layers", "layers/resolveSpec.ts", "tool", "BashStack.ts", "index.ts"],
  "cordis/deepseek": ["services", "services/internal", "layers", "tool", "BashStack.ts", "cordis"],
  "cordis-adapter.ts": ["cordis", "cordis/deepseek"],
  "cli": ["services", "services/internal", "layers", "tool", "BashStack.ts", "index.ts"],
  "index.ts": ["services", "layers", "tool", "BashStack.ts"],
  "ai.ts": ["services", "layers", "tool", "BashStack.ts", "index.ts"],
  "promise.ts": ["services", "BashStack.ts"],
  "docker.ts": ["layers", "services"]
}

describe("architecture", () => {
  const edges = sourceFiles(srcDir).flatMap((full) => {
    const file = path.relative(srcDir, full)
    return relativeImports(full).map((target) => ({ file, from: room(file), to: room(target), target }))
  })

  it("the generic Cordis plugin imports nothing of the DeepSeek harness adapter", () => {
    const generic = edges.filter(({ from, to }) => from === "cordis" && to === "cordis/deepseek")
    expect(generic.map(({ file, target }) => `${file} imports ${target}`)).toEqual([])
    // The room exists: the adapter is found where the rule expects it.
    expect(edges.some(({ from }) => from === "cordis/deepseek")).toBe(true)
  })

  it("every source file belongs to a known room", () => {
    expect([...new Set(edges.map((edge) => edge.from))].filter((name) => !(name in allowed))).toEqual([])
  })

  it("no module imports itself through others (type imports included)", () => {
    const graph = new Map<string, Array<string>>()
    for (const { file, target } of edges) graph.set(file, [...(graph.get(file) ?? []), target])
    const cycles: Array<string> = []
    const visiting: Array<string> = []
    const done = new Set<string>()
    const visit = (file: string): void => {
      visiting.push(file)
      for (const target of graph.get(file) ?? []) {
        if (visiting.includes(target)) cycles.push([...visiting.slice(visiting.indexOf(target)), target].join(" → "))
        else if (!done.has(target)) visit(target)
      }
      visiting.pop()
      done.add(file)
    }
    for (const file of graph.keys()) if (!done.has(file)) visit(file)
    expect(cycles).toEqual([])
  })

  it("imports run one way: services ← layers ← tool ← surfaces, internals stay in layers/", () => {
    const backwards = edges
      .filter(({ from, to }) => from !== to && !(allowed[from] ?? []).includes(to))
      .map(({ file, target }) => `${file} imports ${target}`)
    expect(backwards).toEqual([])
  })
})
