/**
 * Which source files a CLI run loads: the run starts under a module loader hook that writes each
 * loaded file's URL to a list, and a file of the bundled bin (`dist/bin/`) stands for the sources
 * esbuild put in it (its metafile, `dist/bin.meta.json`). Modules loaded by `require` inside a
 * CommonJS package are not seen; the package itself is.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join, relative } from "node:path"
import { fileURLToPath } from "node:url"
import { cleanEnv, cliPath, runNode } from "./cli.js"
import type { CliOutcome } from "./cli.js"

const root = join(fileURLToPath(import.meta.url), "..", "..", "..")

// Runs in the loader's own thread; the list's path comes in through the environment.
const hook = `import { appendFileSync } from "node:fs"
export async function load(url, context, next) {
  if (url.startsWith("file:")) appendFileSync(process.env.EFFECT_BASH_TEST_LOADED_LIST, url + "\\n")
  return next(url, context)
}`
const preload = `import { register } from "node:module"
register(${JSON.stringify(`data:text/javascript,${encodeURIComponent(hook)}`)})`

interface Metafile {
  readonly outputs: Record<string, { readonly inputs: Record<string, unknown> }>
}

/** The sources a file stands for, relative to the repository (`node_modules/zod/…`, `src/cli/…`). */
const sourcesOf = (file: string): ReadonlyArray<string> => {
  const path = relative(root, file)
  if (!path.startsWith("dist/bin/")) return [path]
  const meta = JSON.parse(readFileSync(join(root, "dist", "bin.meta.json"), "utf8")) as Metafile
  const output = meta.outputs[path]
  if (output === undefined) throw new Error(`${path} is not in dist/bin.meta.json: rebuild the bin`)
  return Object.keys(output.inputs)
}

/** Runs the CLI with `args` (stdin at EOF) and lists the sources it loaded. */
export const loadedSources = async (
  args: ReadonlyArray<string>
): Promise<{ readonly outcome: CliOutcome; readonly sources: ReadonlyArray<string> }> => {
  const dir = mkdtempSync(join(tmpdir(), "effect-bash-loaded-"))
  try {
    const list = join(dir, "loaded.txt")
    const outcome = await runNode(
      ["--import", `data:text/javascript,${encodeURIComponent(preload)}`, cliPath, ...args],
      { env: cleanEnv({ EFFECT_BASH_TEST_LOADED_LIST: list }) }
    )
    const urls = readFileSync(list, "utf8").split("\n").filter((line) => line !== "")
    return { outcome, sources: [...new Set(urls.flatMap((url) => sourcesOf(fileURLToPath(url))))] }
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

/** The sources of package `name` among `sources`, at any depth of node_modules. */
export const ofPackage = (sources: ReadonlyArray<string>, name: string): ReadonlyArray<string> =>
  sources.filter((source) => source.includes(`node_modules/${name}/`))
