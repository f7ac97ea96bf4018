/**
 * Which source files a CLI run evaluates: the run writes V8's coverage (`NODE_V8_COVERAGE`), and each
 * function of the bundled bin (`dist/bin/`) that ran is traced, through the file's source map, to the
 * source it was bundled from. A module whose code never ran is not on the list, even though the
 * bundle that holds it was read. And which of Node's own modules a CLI run loads.
 */
import { decode } from "@jridgewell/sourcemap-codec"
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join, relative, resolve } from "node:path"
import { fileURLToPath } from "node:url"
import { cleanEnv, cliPath, runNode } from "./cli.js"
import type { CliOutcome } from "./cli.js"

const root = join(fileURLToPath(import.meta.url), "..", "..", "..")

interface Coverage {
  readonly result: ReadonlyArray<{
    readonly url: string
    readonly functions: ReadonlyArray<{ readonly ranges: ReadonlyArray<{ readonly startOffset: number; readonly endOffset: number; readonly count: number }> }>
  }>
}

/** The scripts V8 wrote coverage for into `dir` (a `NODE_V8_COVERAGE` directory), of every process. */
export const coveredScripts = (dir: string): Coverage["result"] =>
  readdirSync(dir).flatMap((name) => (JSON.parse(readFileSync(join(dir, name), "utf8")) as Coverage).result)

/** The sources of the functions of `file` that ran: each at the first mapped position inside the function. */
const sourcesThatRan = (file: string, ranges: ReadonlyArray<{ readonly startOffset: number; readonly endOffset: number }>) => {
  const text = readFileSync(file, "latin1")
  const lineStarts = [0]
  for (let at = text.indexOf("\n"); at !== -1; at = text.indexOf("\n", at + 1)) lineStarts.push(at + 1)
  const map = JSON.parse(readFileSync(`${file}.map`, "utf8")) as {
    readonly sources: ReadonlyArray<string>
    readonly mappings: string
  }
  const lines = decode(map.mappings)
  const sourceAt = (start: number, end: number): string | undefined => {
    let line = lineStarts.length - 1
    while (lineStarts[line]! > start) line--
    for (; line < lines.length && lineStarts[line]! < end; line++) {
      // A segment of one field maps to no source.
      const segment = lines[line]!.find((segment) => segment.length !== 1 && lineStarts[line]! + segment[0] >= start)
      if (segment !== undefined && segment.length !== 1 && lineStarts[line]! + segment[0] < end) return map.sources[segment[1]]
    }
    return undefined
  }
  return ranges.flatMap(({ startOffset, endOffset }) => {
    const source = sourceAt(startOffset, endOffset)
    return source === undefined ? [] : [relative(root, resolve(dirname(file), source))]
  })
}

/** Runs `use` with a temporary directory of its own, removed once it settles. */
const inTempDirectory = async <A>(prefix: string, use: (dir: string) => Promise<A>): Promise<A> => {
  const dir = mkdtempSync(join(tmpdir(), prefix))
  try {
    return await use(dir)
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

/**
 * Runs the CLI with `args` (stdin at EOF) and lists the sources whose code ran, and the files of the
 * bundled bin that V8 compiled.
 */
export const loadedSources = (
  args: ReadonlyArray<string>
): Promise<{ readonly outcome: CliOutcome; readonly scripts: ReadonlyArray<string>; readonly sources: ReadonlyArray<string> }> =>
  inTempDirectory("effect-bash-loaded-", async (dir) => {
    const outcome = await runNode([cliPath, ...args], { env: cleanEnv({ NODE_V8_COVERAGE: dir }) })
    const bin = coveredScripts(dir).flatMap((script) => {
      const file = script.url.startsWith("file:") ? fileURLToPath(script.url) : undefined
      return file !== undefined && file.startsWith(dirname(cliPath)) ? [{ file, functions: script.functions }] : []
    })
    const sources = bin.flatMap(({ file, functions }) =>
      sourcesThatRan(file, functions.filter((fn) => fn.ranges[0]!.count > 0).map((fn) => fn.ranges[0]!))
    )
    return { outcome, scripts: bin.map(({ file }) => file), sources: [...new Set(sources)] }
  })

const recordLoaded = join(dirname(fileURLToPath(import.meta.url)), "fixtures", "node-modules-loaded.cjs")

/** Runs the CLI with `args` (stdin at EOF) and lists the Node modules its process loaded (`crypto` …). */
export const loadedNodeModules = (
  args: ReadonlyArray<string>
): Promise<{ readonly outcome: CliOutcome; readonly modules: ReadonlyArray<string> }> =>
  inTempDirectory("effect-bash-node-modules-", async (dir) => {
    const file = join(dir, "loaded.json")
    const outcome = await runNode(["--require", recordLoaded, cliPath, ...args], {
      env: cleanEnv({ EFFECT_BASH_TEST_LOADED: file })
    })
    return { outcome, modules: JSON.parse(readFileSync(file, "utf8")) as ReadonlyArray<string> }
  })

/** The sources of package `name` among `sources`, at any depth of node_modules. */
export const ofPackage = (sources: ReadonlyArray<string>, name: string): ReadonlyArray<string> =>
  sources.filter((source) => source.includes(`node_modules/${name}/`))
