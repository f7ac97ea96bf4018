/**
 * What each entry point of the package loads and exposes, checked on the emitted JavaScript in
 * `dist/` (`npm test` builds before vitest runs): optional peers stay out of the entries that do not
 * need them, and the test kit is built on the public API only.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs"
import { dirname, join, resolve } from "node:path"
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "vitest"

const root = join(dirname(fileURLToPath(import.meta.url)), "..", "..")
const packageJson = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as {
  readonly exports: Record<string, string | { readonly types: string; readonly default: string }>
  readonly dependencies: Record<string, string>
  readonly peerDependencies: Record<string, string>
  readonly peerDependenciesMeta: Record<string, { readonly optional?: boolean }>
  readonly optionalDependencies: Record<string, string>
}

const specifiers = (source: string): Array<string> =>
  [...source.matchAll(/^\s*(?:import|export)\s+(?:[^"']*?\sfrom\s+)?["']([^"']+)["']/gm)].map((match) => match[1]!)

const packageName = (specifier: string): string =>
  specifier.split("/").slice(0, specifier.startsWith("@") ? 2 : 1).join("/")

/** The module an entry point's wrapper (`scripts/build-entries.mjs`) imports once it has checked `effect`. */
const wrappedModule = (source: string): Array<string> =>
  [...source.matchAll(/^const \w+ = await import\("(\.[^"]+)"\)/gm)].map((match) => match[1]!)

/** Every package a module loads at run time, following its relative imports. */
const loadedPackages = (entry: string): Set<string> => {
  const seen = new Set<string>()
  const packages = new Set<string>()
  const visit = (file: string): void => {
    if (seen.has(file)) return
    seen.add(file)
    const source = readFileSync(file, "utf8")
    for (const specifier of [...specifiers(source), ...wrappedModule(source)]) {
      if (specifier.startsWith(".")) visit(resolve(dirname(file), specifier))
      else if (!specifier.startsWith("node:")) packages.add(packageName(specifier))
    }
  }
  visit(join(root, entry))
  return packages
}

const entryFile = (subpath: string, condition: "types" | "default"): string => {
  const target = packageJson.exports[subpath]
  if (target === undefined || typeof target === "string") throw new Error(`no conditional export ${subpath}`)
  return target[condition]
}

describe("package entry points", () => {
  it("every export resolves to a built module and its declarations", () => {
    for (const subpath of [".", "./ai", "./docker", "./testing", "./promise", "./cordis"]) {
      expect(existsSync(join(root, entryFile(subpath, "default"))), subpath).toBe(true)
      expect(existsSync(join(root, entryFile(subpath, "types"))), subpath).toBe(true)
    }
  })

  it("only effect-bash/ai loads @effect/ai; no library entry loads the CLI's packages", () => {
    // Every peer is optional to npm (`npx effect-bash` installs none); these are optional to the library too.
    const optional = ["@effect/ai", "@effect/rpc", "@effect/experimental", "docker-modem"]
    for (const name of optional) expect(packageJson.peerDependenciesMeta[name]?.optional, name).toBe(true)
    const cliOnly = ["@effect/cli", "@effect/printer", "@effect/printer-ansi", "@modelcontextprotocol/sdk"]
    for (const subpath of [".", "./testing", "./cordis"]) {
      const loaded = [...loadedPackages(entryFile(subpath, "default"))]
      expect(loaded.filter((name) => optional.includes(name) || cliOnly.includes(name)), subpath).toEqual([])
    }
    expect(loadedPackages(entryFile("./ai", "default"))).toContain("@effect/ai")
  })

  it("every peer is optional to npm, so installing the package alone (npx) brings none", () => {
    for (const name of Object.keys(packageJson.peerDependencies)) {
      expect(packageJson.peerDependenciesMeta[name]?.optional, name).toBe(true)
    }
  })

  it("each library entry checks effect before it loads a module of the package", () => {
    for (const subpath of [".", "./ai", "./docker", "./testing", "./cordis"]) {
      const source = readFileSync(join(root, entryFile(subpath, "default")), "utf8")
      expect(specifiers(source), subpath).toEqual(["../effectGuard.js"])
      expect(source.indexOf("checkEffectVersion()"), subpath).toBeLessThan(source.indexOf("await import("))
      expect(wrappedModule(source), subpath).toHaveLength(1)
    }
  })

  it("effect-bash/promise carries its own Effect: its bundle loads Node's modules and the optional docker-modem, koffi, node-pty, tar-stream and tar-fs only, its declarations nothing", () => {
    const bundle = readFileSync(join(root, entryFile("./promise", "default")), "utf8")
    const loaded = new Set(
      [...bundle.matchAll(/(?:\bfrom|\bimport\(|\brequire\()\s*["']([^"']+)["']/g)].map((match) => match[1]!)
    )
    expect([...loaded].filter((specifier) => !specifier.startsWith("node:")).sort()).toEqual(["docker-modem", "koffi", "node-pty", "tar-fs", "tar-stream"])
    const declarations = readFileSync(join(root, entryFile("./promise", "types")), "utf8")
    expect(specifiers(declarations)).toEqual([])
    expect(declarations).not.toMatch(/\bimport\(/)
  })

  it("every package the emitted code and declarations import is a declared dependency, optional dependency or peer", () => {
    const declared = new Set(
      [packageJson.dependencies, packageJson.optionalDependencies, packageJson.peerDependencies].flatMap(Object.keys)
    )
    const walk = (dir: string): Array<string> =>
      readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
        entry.isDirectory() ? walk(join(dir, entry.name)) : [join(dir, entry.name)]
      )
    const imported = new Set<string>()
    for (const file of walk(join(root, "dist", "src")).filter((name) => /\.(d\.ts|js)$/.test(name))) {
      const source = readFileSync(file, "utf8")
      const inline = [...source.matchAll(/import\(["']([^"']+)["']/g)].map((match) => match[1]!)
      for (const specifier of [...specifiers(source), ...inline]) {
        if (!specifier.startsWith(".") && !specifier.startsWith("node:")) imported.add(packageName(specifier))
      }
    }
    expect([...imported].filter((name) => !declared.has(name))).toEqual([])
    expect(imported).toContain("@standard-schema/spec")
  })

  it("the README's install command names the peers with exactly the ranges package.json declares", () => {
    const readme = readFileSync(join(root, "README.md"), "utf8")
    const install = /## Install\n[\s\S]*?```sh\n([\s\S]*?)```/.exec(readme)?.[1] ?? ""
    const named = Object.fromEntries(
      [...install.matchAll(/(?:^|\s)((?:@[\w-]+\/)?[\w-]+)@(\S+)/g)].map((match) => [match[1]!, match[2]!])
    )
    const needed = ["effect", "@effect/platform", "@effect/platform-node", "@effect/ai", "@effect/rpc", "@effect/experimental"]
    expect(Object.keys(named).sort()).toEqual([...needed].sort())
    for (const name of needed) expect(named[name], name).toBe(packageJson.peerDependencies[name])
  })

  it("the test doubles are exported from effect-bash/testing only", async () => {
    const main = await import("../../src/index.js")
    const testing = await import("../../src/testing/index.js")
    const doubles = [
      "ApprovalScripted",
      "FakeConfiningExecutor",
      "FakeContainerEngine",
      "FakeProcessSpawner",
      "FakePtySpawner",
      "ScriptedBashExecutor"
    ]
    for (const name of doubles) {
      expect(main, name).not.toHaveProperty(name)
      expect(testing, name).toHaveProperty(name)
    }
  })

  it("effect-bash/testing is built on the public API and the executors' shared resolve only", () => {
    // The container-engine port is public on effect-bash/docker.
    const index = readFileSync(join(root, "src", "index.ts"), "utf8") + readFileSync(join(root, "src", "docker.ts"), "utf8")
    const src = join(root, "src")
    const walk = (dir: string): Array<string> =>
      readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
        entry.isDirectory() ? walk(join(dir, entry.name)) : [join(dir, entry.name)]
      )
    for (const file of walk(join(src, "testing"))) {
      for (const specifier of specifiers(readFileSync(file, "utf8"))) {
        // The module a relative specifier names, from `src/` (`services/BashExecutor.js`).
        const target = specifier.startsWith(".") ? resolve(dirname(file), specifier).slice(src.length + 1) : undefined
        const service = target === undefined ? null : /^services\/(\w+)\.js$/.exec(target)
        const allowed = specifier.startsWith("effect/") || specifier.startsWith("node:") ||
          target?.startsWith("testing/") === true ||
          target === "index.js" ||
          // A double's `resolve` is the executors' own: the one producer of the `BashExecutor.Spec` brand.
          target === "layers/resolveSpec.js" ||
          (service !== null && index.includes(`from "./services/${service[1]}.js"`))
        expect(allowed, `${file} imports ${specifier}`).toBe(true)
      }
    }
  })
})
