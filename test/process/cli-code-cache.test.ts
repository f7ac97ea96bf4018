/**
 * The bin's V8 code cache (`src/cli/bin.ts`), on a copy of `dist/bin/` of each test's own: a run writes
 * its subcommand's cache as it exits only where none was usable, so a cache a later run leaves as it
 * was is one that run used.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, truncateSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import { cleanEnv, cliPath, runNode } from "../support/cli.js"
import { coveredScripts } from "../support/loadedModules.js"

/** A directory of this test's own, removed with its scope. */
const tempDirectory = (prefix: string) =>
  Effect.acquireRelease(
    Effect.sync(() => mkdtempSync(join(tmpdir(), prefix))),
    (directory) => Effect.sync(() => rmSync(directory, { recursive: true, force: true }))
  )

/** A copy of the built `dist/bin/` without its caches. */
const binCopy = Effect.map(tempDirectory("effect-bash-cache-"), (directory) => {
  cpSync(dirname(cliPath), directory, { recursive: true, filter: (source) => !source.endsWith(".cache") })
  return directory
})

const caches = (directory: string) => readdirSync(directory).filter((name) => name.endsWith(".cache"))

/** `run -- echo hi` with the executable in `directory`. */
const runIn = (directory: string, env: Record<string, string> = {}) =>
  Effect.promise(() => runNode([join(directory, "effect-bash.js"), "run", "--", "echo", "hi"], { env: cleanEnv(env) }))

/** A copy of `dist/bin/` after one `run`, and the run cache that run wrote in it. */
const copyWithRunCache = Effect.gen(function*() {
  const directory = yield* binCopy
  yield* runIn(directory)
  const [cache] = caches(directory)
  return { directory, file: join(directory, cache!) }
})

/** `mcp` with stdin at EOF (it starts its server, sees the transport closed and exits). */
const mcpIn = (directory: string) =>
  Effect.promise(() => runNode([join(directory, "effect-bash.js"), "mcp"], { env: cleanEnv() }))

/** What a cache file starts with: the bundle's path, after its length (4 bytes). */
const headerOf = (cache: Buffer) => cache.subarray(0, 4 + cache.readUInt32BE(0))

describe("the bin's code cache", () => {
  it.scopedLive("the first run of a subcommand writes that subcommand's cache; the next one uses it as it is", () =>
    Effect.gen(function*() {
      const directory = yield* binCopy
      expect(yield* runIn(directory)).toMatchObject({ code: 0, stdout: "hi\n" })
      const [cache, ...others] = caches(directory)
      expect(others).toEqual([])
      expect(cache).toMatch(new RegExp(`^cli-\\w+\\.cjs\\.${process.versions.v8.replace(/\W/g, "\\$&")}\\.run\\.cache$`))
      // A cache is written to a temporary file renamed into place: a new one is another inode.
      const written = statSync(join(directory, cache!))
      expect(yield* runIn(directory)).toMatchObject({ code: 0, stdout: "hi\n" })
      expect(caches(directory)).toEqual([cache])
      const after = statSync(join(directory, cache!))
      expect([after.ino, after.mtimeMs]).toEqual([written.ino, written.mtimeMs])
    }))

  it.scopedLive("mcp writes a cache of the command's bundle and of the MCP SDK's; the next mcp uses both as they are", () =>
    Effect.gen(function*() {
      const directory = yield* binCopy
      expect(yield* mcpIn(directory)).toMatchObject({ code: 0 })
      const written = caches(directory).sort()
      expect(written).toHaveLength(2)
      expect(written.map((name) => name.replace(/-\w+\.cjs\..*\.(\w+)\.cache$/, "-*.cjs.$1"))).toEqual([
        "cli-*.cjs.mcp",
        "mcp-sdk-*.cjs.mcp"
      ])
      const before = written.map((name) => statSync(join(directory, name)))
      expect(yield* mcpIn(directory)).toMatchObject({ code: 0 })
      expect(caches(directory).sort()).toEqual(written)
      const after = written.map((name) => statSync(join(directory, name)))
      expect(after.map(({ ino, mtimeMs }) => [ino, mtimeMs])).toEqual(before.map(({ ino, mtimeMs }) => [ino, mtimeMs]))
    }))

  it.scopedLive("a cache V8 rejects is written anew, and the run does what it does", () =>
    Effect.gen(function*() {
      const { directory, file } = yield* copyWithRunCache
      const original = readFileSync(file)
      const header = headerOf(original)
      const garbage = Buffer.concat([header, Buffer.alloc(4096, 7)])
      writeFileSync(file, garbage)
      expect(yield* runIn(directory)).toMatchObject({ code: 0, stdout: "hi\n" })
      const rewritten = readFileSync(file)
      expect(rewritten.equals(garbage)).toBe(false)
      expect(rewritten.subarray(0, header.length).equals(header)).toBe(true)
    }))

  it.scopedLive("a cache file far larger than any V8 makes is not read: the run does what it does and writes a new one", () =>
    Effect.gen(function*() {
      const { directory, file } = yield* copyWithRunCache
      // Sparse: 5 GiB, more than one buffer can hold.
      truncateSync(file, 5 * 1024 ** 3)
      expect(yield* runIn(directory)).toMatchObject({ code: 0, stdout: "hi\n" })
      expect(statSync(file).size).toBeLessThan(64 * 1024 ** 2)
      expect(headerOf(readFileSync(file)).subarray(4).toString("utf8")).toMatch(/\/cli-\w+\.cjs$/)
    }))

  it.scopedLive("a cache copied along with the bundle is not used elsewhere: the code runs under the copy's path", () =>
    Effect.gen(function*() {
      const first = yield* binCopy
      yield* runIn(first)
      const [cache] = caches(first)
      const second = yield* tempDirectory("effect-bash-cache-moved-")
      cpSync(first, second, { recursive: true })
      const coverage = yield* tempDirectory("effect-bash-cache-coverage-")
      expect(yield* runIn(second, { NODE_V8_COVERAGE: coverage })).toMatchObject({ code: 0, stdout: "hi\n" })
      const bundleUrls = coveredScripts(coverage).map(({ url }) => url).filter((url) => /\/cli-\w+\.cjs$/.test(url))
      expect(bundleUrls.map((url) => dirname(fileURLToPath(url)))).toEqual([second])
      const bundle = readdirSync(second).find((name) => /^cli-\w+\.cjs$/.test(name))!
      expect(headerOf(readFileSync(join(second, cache!))).subarray(4).toString("utf8")).toBe(join(second, bundle))
    }))
})
