import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { readFileSync } from "node:fs"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import * as vm from "node:vm"
import { loadedNodeModules, loadedSources, ofPackage } from "../support/loadedModules.js"

/** The MCP SDK's bundle, by the end of its absolute path. */
const mcpSdkScript = /\/mcp-sdk-\w+\.cjs$/

// What a subcommand does not use, it does not load (no code of it runs): the MCP server (its SDK, zod)
// costs every `run` its load time otherwise, and the demo tour every `mcp`.
describe("what each subcommand loads (the bundled bin)", () => {
  it.live("run loads neither the MCP SDK nor zod", () =>
    Effect.gen(function*() {
      const { outcome, scripts, sources } = yield* Effect.promise(() => loadedSources(["run", "--", "true"]))
      expect(outcome).toMatchObject({ code: 0, stdout: "(no output)\n" })
      // The list is real: what run does use is on it.
      expect(sources.filter((source) => /\bsrc\/cli\/runCommand\.(ts|js)$/.test(source))).toHaveLength(1)
      expect(ofPackage(sources, "@modelcontextprotocol/sdk")).toEqual([])
      expect(ofPackage(sources, "zod")).toEqual([])
      // The SDK's own bundle is not even compiled.
      expect(scripts.filter((script) => mcpSdkScript.test(script))).toEqual([])
    }))

  it.live("run loads Node's crypto and readline only on the paths that use them: crypto to name a spill file", () =>
    Effect.gen(function*() {
      const plain = yield* Effect.promise(() => loadedNodeModules(["run", "--", "true"]))
      expect(plain.outcome).toMatchObject({ code: 0, stdout: "(no output)\n" })
      // The list is real: what run does use is on it.
      expect(plain.modules).toContain("child_process")
      expect(plain.modules).not.toContain("crypto")
      expect(plain.modules).not.toContain("readline")
      const spilled = yield* Effect.promise(() => loadedNodeModules(["run", "--max-output-bytes", "100", "--", "seq 1 5000"]))
      expect(spilled.outcome.code).toBe(0)
      expect(spilled.outcome.stdout).toMatch(/full output: \/\S+\/stdout-[\w-]+\.log\]/)
      expect(spilled.modules).toContain("crypto")
    }))

  it.live("mcp loads the MCP SDK but not the demo tour", () =>
    Effect.gen(function*() {
      // stdin at EOF: the server starts, sees its transport closed and shuts down.
      const { outcome, scripts, sources } = yield* Effect.promise(() => loadedSources(["mcp"]))
      expect(outcome.code).toBe(0)
      expect(scripts.filter((script) => mcpSdkScript.test(script))).toHaveLength(1)
      expect(ofPackage(sources, "@modelcontextprotocol/sdk")).not.toEqual([])
      expect(sources.filter((source) => /\bdemoTour\.(ts|js)$/.test(source))).toEqual([])
    }))
})

interface Metafile {
  readonly outputs: Record<string, {
    readonly imports: ReadonlyArray<{ readonly path: string; readonly kind: string; readonly external?: boolean }>
    readonly inputs: Record<string, { readonly bytesInOutput: number }>
  }>
}

// The bundled bin runs without the package's peers installed: what it imports from outside its own
// files is Node's, or an optional peer that it loads only when the feature needing it is used (the
// bundle's `import()` of it is a `require` in a promise's callback: a script run by `vm` has no
// `import()` of its own).
describe("the bundled bin (dist/bin)", () => {
  const root = join(dirname(fileURLToPath(import.meta.url)), "..", "..")
  const meta = JSON.parse(readFileSync(join(root, "dist", "bin.meta.json"), "utf8")) as Metafile
  /**
   * The imports of each of the command's output files that the build left to be resolved when it runs
   * (`promise.mjs`, the entry `effect-bash/promise`, is an ES module that is no part of the command:
   * `package-entries.test.ts` checks what it imports).
   */
  const externals = Object.entries(meta.outputs).filter(([file]) => !file.endsWith(".mjs")).flatMap(([file, output]) =>
    output.imports.filter((imported) => imported.external === true && !imported.path.startsWith("node:"))
      .map((imported) => ({ file, ...imported }))
  )
  const mcpSdk = /^\.\/mcp-sdk-\w+\.cjs$/
  /** The command's bundle among the output files. */
  const cliBundle = /^dist\/bin\/cli-\w+\.cjs$/

  it("imports only Node's modules, and the optional peers (docker-modem, tar-stream, tar-fs, node-pty, koffi) only once a container, its files, a terminal or a posix_spawn asks", () => {
    const outside = externals.filter(({ path }) => !mcpSdk.test(path))
    const optionalPeers = ["docker-modem", "tar-stream", "tar-fs", "node-pty", "koffi"]
    expect(outside.length).toBeGreaterThan(0)
    expect(outside.map(({ path, kind }) => ({ path: optionalPeers.includes(path), kind }))).toEqual(
      outside.map(() => ({ path: true, kind: "require-call" }))
    )
    for (const file of new Set(outside.map(({ file }) => file))) {
      const text = readFileSync(join(root, file), "latin1")
      expect(optionalPeers.some((peer) => text.includes(`require("${peer}")`)), file).toBe(true)
      for (const peer of optionalPeers) {
        const requires = text.split(`require("${peer}")`).length - 1
        const deferred = text.match(new RegExp(`Promise\\.resolve\\(\\)\\.then\\(\\(\\)=>[\\w$]+\\(require\\("${peer}"\\)`, "g")) ?? []
        expect(deferred, peer).toHaveLength(requires)
      }
    }
    expect(Object.keys(meta.outputs)).toContain("dist/bin/effect-bash.js")
  })

  it("the command's bundle holds no code of the MCP SDK or of its schemas (zod, ajv): the SDK's bundle does", () => {
    const heldBy = (pattern: RegExp) => (file: string) =>
      Object.entries(meta.outputs[file]!.inputs).filter(([input, { bytesInOutput }]) => pattern.test(input) && bytesInOutput > 0)
    const sdkPackages = /node_modules\/(@modelcontextprotocol\/sdk|zod|ajv)\//
    const [cli] = Object.keys(meta.outputs).filter((file) => cliBundle.test(file))
    const [sdk] = Object.keys(meta.outputs).filter((file) => /^dist\/bin\/mcp-sdk-\w+\.cjs$/.test(file))
    expect(heldBy(sdkPackages)(cli!)).toEqual([])
    expect(heldBy(/node_modules\/zod\//)(sdk!).length).toBeGreaterThan(0)
  })

  // Reading `caller` of a strict function throws; of a sloppy one it is `null`. Strictness is lexical:
  // the file's outermost function decides it for all the code in the file.
  it("every file runs in strict mode, as its ES module sources do everywhere else", () => {
    const files = Object.keys(meta.outputs).filter((file) => /\.c?js$/.test(file))
    expect(files).toHaveLength(3)
    for (const file of files) {
      const text = readFileSync(join(root, file), "latin1")
      // The executable's bundles are written as the function Node wraps a CommonJS module in; the
      // executable is a plain CommonJS file, which Node wraps the same way.
      const outermost: Function = text.startsWith("(function (exports, require, module, __filename, __dirname) {")
        ? new vm.Script(text, { filename: file }).runInThisContext()
        : vm.compileFunction(text.replace(/^#!.*/, ""), ["exports", "require", "module", "__filename", "__dirname"])
      expect(() => outermost.caller, file).toThrow(TypeError)
    }
  })

  it("the command's bundle takes the MCP SDK from the SDK's bundle beside it, and nothing else of its own", () => {
    const own = externals.filter(({ path }) => mcpSdk.test(path))
    expect(own.length).toBeGreaterThan(0)
    for (const { file, path } of own) {
      expect(file).toMatch(cliBundle)
      expect(Object.keys(meta.outputs)).toContain(`dist/bin/${path.slice(2)}`)
    }
  })
})
