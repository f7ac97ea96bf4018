#!/usr/bin/env node
/**
 * The `effect-bash` executable (`dist/bin/effect-bash.js`): it runs the command's bundle (`main.ts`
 * and all it imports, one CommonJS file beside this one), and the MCP SDK's bundle when the first
 * asks for it, each through a V8 code cache, so a start deserializes the bytecode an earlier run of
 * the same subcommand compiled instead of parsing and compiling the bundle again (Node 20 caches no
 * compiled code itself).
 *
 * Invariants:
 * - A cache is only ever used with the bundle it was made from: its header carries the SHA-256 of
 *   the bundle the build wrote (embedded here by the build, so a start hashes nothing), checked
 *   before V8 sees the cache, and V8 itself rejects a cache made by another V8 version or with other
 *   V8 flags. (V8 compares only the source's length: without the hash, a cache made from another
 *   bundle of the same length would run that bundle's code.)
 * - A cache file is opened without blocking and without following a link, and used only if it is a
 *   regular file owned by this user (or root), writable by no one else, and of a size V8 could have
 *   written: a FIFO, a device or another user's file at its path is never read.
 * - It is only ever used at the path it was made for: a script compiled from a cache keeps the name
 *   it was first compiled under (stack traces and coverage would name the old place), so a cache
 *   starts with that path, and one copied along with the bundle elsewhere is not used there.
 * - Nothing depends on the cache: without one, or with one that is rejected or far too large to be
 *   V8's, the bundle is compiled from its source, and the run still does what it does.
 * - A cache is written only where none was usable, once the process exits (so it holds what the run
 *   compiled), to a temporary file renamed into place (a concurrent start reads a whole file or
 *   none), and only when the bundle's directory is writable; any failure leaves no cache.
 */
import { accessSync, closeSync, constants, fstatSync, openSync, readSync, renameSync, rmSync, writeFileSync } from "node:fs"
import { createRequire } from "node:module"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import * as vm from "node:vm"

/** The file names of the command's bundle and of the MCP SDK's, beside this file, set by the build. */
declare const EFFECT_BASH_CLI_BUNDLE: string
declare const EFFECT_BASH_MCP_SDK_BUNDLE: string
/** The SHA-256 (hex) of each bundle's content, by file name, set by the build. */
declare const EFFECT_BASH_BUNDLE_HASHES: Record<string, string>

const directory = dirname(fileURLToPath(import.meta.url))

// One cache per bundle and subcommand, holding what that subcommand compiled (`mcp` compiles the
// MCP server, `run` does not): a cache is written only where none was usable, so a shared one would
// keep whichever subcommand ran first.
const subcommand = ["run", "mcp", "demo"].find((name) => name === process.argv[2]) ?? "other"

/** An open file and its size. */
interface OpenFile {
  readonly fd: number
  readonly size: number
}

const openFile = (path: string): OpenFile => {
  const fd = openSync(path, "r")
  return { fd, size: fstatSync(fd).size }
}

/** Reads `file` whole into the start of `buffer` (at least its size), closes it, and returns that part. */
const readWhole = (file: OpenFile, buffer: Buffer): Buffer => {
  try {
    let length = 0
    while (length < file.size) {
      const read = readSync(file.fd, buffer, length, file.size - length, length)
      if (read === 0) break
      length += read
    }
    return buffer.subarray(0, length)
  } finally {
    closeSync(file.fd)
  }
}

/** The code cache of one bundle: where it is, and what its file starts with. */
const cacheOf = (bundle: string, name: string) => {
  const identity = Buffer.from(`${bundle}\0${EFFECT_BASH_BUNDLE_HASHES[name]}`, "utf8")
  const length = Buffer.alloc(4)
  length.writeUInt32BE(identity.length)
  return {
    file: `${bundle}.${process.versions.v8}.${subcommand}.cache`,
    /** The length of what follows (4 bytes, big-endian), then the bundle's path, a NUL, and its hash. */
    header: Buffer.concat([length, identity])
  }
}

// Not on every platform (Windows has neither flag nor uids): there, 0 and no owner check.
const cacheOpenFlags = constants.O_RDONLY | (constants.O_NONBLOCK ?? 0) | (constants.O_NOFOLLOW ?? 0)
const uid = process.getuid?.()

/**
 * The cache file, open, unless it is missing or unreadable, is no regular file (a FIFO there would
 * block a plain open), is another user's (root's excepted) or writable by group or others (anyone
 * could have written it), or is far larger than any cache V8 makes of a bundle of `bundleSize` bytes
 * (a few times the source): such a file is not read, and a new cache replaces it.
 */
const openCache = (path: string, bundleSize: number): OpenFile | undefined => {
  try {
    const fd = openSync(path, cacheOpenFlags)
    const stat = fstatSync(fd)
    const trusted = stat.isFile() && stat.size <= 16 * bundleSize && (stat.mode & 0o022) === 0 &&
      (uid === undefined || stat.uid === uid || stat.uid === 0)
    if (trusted) return { fd, size: stat.size }
    closeSync(fd)
  } catch {
    // No cache to use.
  }
  return undefined
}

/** The cache's code, if the file is there, readable and made for this bundle, at this path. */
const readCache = (file: OpenFile | undefined, header: Buffer, buffer: Buffer): Buffer | undefined => {
  if (file === undefined) return undefined
  try {
    const cache = readWhole(file, buffer)
    return cache.subarray(0, header.length).equals(header) ? cache.subarray(header.length) : undefined
  } catch {
    return undefined
  }
}

const writeCache = (script: vm.Script, cache: ReturnType<typeof cacheOf>): void => {
  const temporary = `${cache.file}.${process.pid}.tmp`
  try {
    accessSync(directory, constants.W_OK)
    // A new file (never one a link planted at its name points to), writable by this user alone.
    writeFileSync(temporary, Buffer.concat([cache.header, script.createCachedData()]), { flag: "wx", mode: 0o644 })
    renameSync(temporary, cache.file)
  } catch {
    rmSync(temporary, { force: true })
  }
}

/** Runs a bundle (a CommonJS module the build wrote as its wrapper function), and returns its exports. */
const load = (name: string, require: NodeJS.Require): unknown => {
  const bundle = join(directory, name)
  const cache = cacheOf(bundle, name)
  const bundleFile = openFile(bundle)
  const cacheFile = openCache(cache.file, bundleFile.size)
  // One buffer holds the bundle, then the cache: the second read reuses the pages the first one
  // touched instead of faulting in fresh ones.
  const buffer = Buffer.allocUnsafe(Math.max(bundleFile.size, cacheFile?.size ?? 0))
  // The build writes the bundle in ASCII (esbuild escapes other characters), which latin1 decodes
  // exactly, and much faster than utf8.
  const source = readWhole(bundleFile, buffer).toString("latin1")
  const cachedData = readCache(cacheFile, cache.header, buffer)
  const script = new vm.Script(source, {
    filename: bundle,
    ...(cachedData === undefined ? {} : { cachedData })
  })
  if (cachedData === undefined || script.cachedDataRejected === true) {
    process.once("exit", () => writeCache(script, cache))
  }
  const module = { exports: {} }
  script.runInThisContext()(module.exports, require, module, bundle, directory)
  return module.exports
}

// The command's bundle requires the MCP SDK's by its relative name: that one is loaded here, once,
// through its cache; every other module as Node would.
const nodeRequire = createRequire(join(directory, EFFECT_BASH_CLI_BUNDLE))
let mcpSdk: unknown
const cliRequire = Object.assign((id: string): unknown => {
  if (id !== `./${EFFECT_BASH_MCP_SDK_BUNDLE}`) return nodeRequire(id)
  mcpSdk ??= load(EFFECT_BASH_MCP_SDK_BUNDLE, createRequire(join(directory, EFFECT_BASH_MCP_SDK_BUNDLE)))
  return mcpSdk
}, nodeRequire)
load(EFFECT_BASH_CLI_BUNDLE, cliRequire)
