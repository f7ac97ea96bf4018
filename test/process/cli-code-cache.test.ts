/**
 * The bin's V8 code cache (`src/cli/bin.ts`), on a copy of `dist/bin/` of each test's own: a run writes
 * its subcommand's cache as it exits only where none was usable, so a cache a later run leaves as it
 * was is one that run used.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { execFileSync } from "node:child_process"
import { createHash } from "node:crypto"
import { chmodSync, cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, truncateSync, writeFileSync } from "node:fs"
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

/** What a cache file starts with: the bundle's path and its hash, after their length (4 bytes). */
const headerOf = (cache: Buffer) => cache.subarray(0, 4 + cache.readUInt32BE(0))

/** The bundle's path a cache file names (its header holds the path, a NUL, then the bundle's hash). */
const pathOf = (cache: Buffer) => headerOf(cache).subarray(4).toString("utf8").split("\0")[0]

/** The command's bundle in `directory`, and where `run`'s cache of it is. */
const runBundleOf = (directory: string) => {
  const bundle = readdirSync(directory).find((name) => /^cli-\w+\.cjs$/.test(name))!
  return { bundle: join(directory, bundle), cache: join(directory, `${bundle}.${process.versions.v8}.run.cache`) }
}

/** `run -- true` with the executable in `directory`. */
const runTrueIn = (directory: string) =>
  Effect.promise(() => runNode([join(directory, "effect-bash.js"), "run", "--", "true"], { env: cleanEnv() }))

const sha256 = (data: Buffer) => createHash("sha256").update(data).digest("hex")

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
      expect(pathOf(readFileSync(file))).toMatch(/\/cli-\w+\.cjs$/)
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
      expect(pathOf(readFileSync(join(second, cache!)))).toBe(join(second, bundle))
    }))

  it.scopedLive("a FIFO at the cache's path does not block the start: the run does what it does and a cache file replaces it", () =>
    Effect.gen(function*() {
      const directory = yield* binCopy
      const { cache } = runBundleOf(directory)
      execFileSync("mkfifo", [cache])
      // A plain open of a FIFO waits for a writer that never comes (the run would end by the test's kill).
      expect(yield* runIn(directory)).toMatchObject({ code: 0, stdout: "hi\n" })
      expect(statSync(cache).isFile()).toBe(true)
    }))

  it.scopedLive("a cache made from another bundle of the same length is not used: the bundle's own code runs", () =>
    Effect.gen(function*() {
      const directory = yield* binCopy
      const { bundle, cache } = runBundleOf(directory)
      const executable = join(directory, "effect-bash.js")
      const original = { bundle: readFileSync(bundle), executable: readFileSync(executable, "utf8") }
      // Another build of the same length: one text differs, and its executable carries its hash.
      const other = Buffer.from(original.bundle.toString("latin1").replace("(no output)", "(NO OUTPUT)"), "latin1")
      expect(other.length).toBe(original.bundle.length)
      writeFileSync(bundle, other)
      writeFileSync(executable, original.executable.replace(sha256(original.bundle), sha256(other)))
      expect(yield* runTrueIn(directory)).toMatchObject({ code: 0, stdout: "(NO OUTPUT)\n" })
      expect(statSync(cache).isFile()).toBe(true)
      // Back to this build, with the other build's cache at its cache's path.
      writeFileSync(bundle, original.bundle)
      writeFileSync(executable, original.executable)
      expect(yield* runTrueIn(directory)).toMatchObject({ code: 0, stdout: "(no output)\n" })
    }))

  it.scopedLive("a cache writable by others is not used, and is replaced by one writable by this user alone", () =>
    Effect.gen(function*() {
      const { directory, file } = yield* copyWithRunCache
      const before = statSync(file)
      chmodSync(file, 0o666)
      expect(yield* runIn(directory)).toMatchObject({ code: 0, stdout: "hi\n" })
      const after = statSync(file)
      expect(after.ino).not.toBe(before.ino)
      expect(after.mode & 0o022).toBe(0)
    }))
})
