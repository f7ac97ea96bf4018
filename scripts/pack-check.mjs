/**
 * The package as a user gets it (issue 11's "done when"): `npm pack`, then a fresh app that pins
 * another 3.x patch of `effect` installs the tarball from the registry's point of view, and
 *   - the tarball has a LICENSE, no `dist/bench`, and every source map's sources;
 *   - the app's node_modules holds exactly one `effect`, the app's own;
 *   - a strict NodeNext consumer (`skipLibCheck: false`) importing every entry point type-checks,
 *     and the README's examples type-check and run from the installed package;
 *   - the bundled `effect-bash` bin runs a command and answers an MCP `initialize`.
 * Hooks: every `scripts/pack-check.d/*.mjs` exports `default async ({ app, log }) => boolean`, run
 * last against the installed app (e.g. a Cordis plugin written the reference's way).
 *
 * Prints `PASS pack check` or `FAIL pack check` and exits 0 or 1. Needs the npm registry.
 *
 *   node scripts/pack-check.mjs [--no-build] [--keep]
 */
import { spawnSync } from "node:child_process"
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join, posix } from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"
import { checkExamples } from "./readme-examples.mjs"

const root = join(dirname(fileURLToPath(import.meta.url)), "..")
const manifest = JSON.parse(readFileSync(join(root, "package.json"), "utf8"))
/** A 3.x patch other than the one this repository's lockfile pins, so a second copy would show. */
const effectPin = "3.22.3"

let ok = true
const log = (line) => console.log(line)
const check = (passed, what, detail = "") => {
  if (!passed) ok = false
  log(`${passed ? "ok  " : "FAIL"} ${what}${!passed && detail !== "" ? `\n${detail}` : ""}`)
  return passed
}
const sh = (command, args, cwd, timeout = 180_000, input = undefined) => {
  const started = Date.now()
  const result = spawnSync(command, args, { cwd, input, encoding: "utf8", timeout, killSignal: "SIGKILL", maxBuffer: 256 * 1024 * 1024 })
  return { ...result, ms: Date.now() - started, output: `${result.stdout ?? ""}${result.stderr ?? ""}` }
}

const work = mkdtempSync(join(tmpdir(), "effect-bash-pack-"))
try {
  // 1. The tarball (prepack builds dist/; --no-build when the caller just built it).
  const noBuild = process.argv.includes("--no-build") ? ["--ignore-scripts"] : []
  const pack = sh("npm", ["pack", "--json", ...noBuild, "--pack-destination", work], root)
  if (!check(pack.status === 0, `npm pack (${pack.ms} ms)`, pack.output)) throw new Error("no tarball")
  const [packed] = JSON.parse(pack.stdout.slice(pack.stdout.indexOf("[")))
  const tarball = join(work, packed.filename)
  const files = new Set(packed.files.map((file) => file.path))
  check(files.has("LICENSE"), "the tarball has LICENSE")
  const bench = [...files].filter((file) => file.startsWith("dist/bench") || file.startsWith("bench/"))
  check(bench.length === 0, "the tarball has no bench", bench.join("\n"))
  // The bundled bin's maps carry their sources' text (the bundled packages are not in the tarball).
  const unmapped = [...files].filter((file) => file.endsWith(".map")).flatMap((map) => {
    const { sources, sourcesContent = [] } = JSON.parse(sh("tar", ["-xzOf", tarball, `package/${map}`], work).stdout)
    return sources.flatMap((source, i) => {
      const path = posix.join(posix.dirname(map), source)
      return files.has(path) || typeof sourcesContent[i] === "string" ? [] : [`${map}: ${path}`]
    })
  })
  check(unmapped.length === 0, "every source map's sources are in the tarball or in the map", unmapped.slice(0, 10).join("\n"))
  const bin = manifest.bin["effect-bash"].replace(/^\.\//, "")
  check(files.has(bin) && files.has(`${bin}.map`), `the tarball has the bundled bin ${bin} and its map`)

  // 2. A fresh app on another patch of effect.
  const app = join(work, "app")
  const devPin = (name) => manifest.devDependencies[name]
  const peers = { ...manifest.peerDependencies, effect: effectPin }
  sh("mkdir", ["-p", app], work)
  writeFileSync(join(app, "package.json"), JSON.stringify({
    name: "effect-bash-consumer",
    private: true,
    type: "module",
    dependencies: { ...peers, "effect-bash": `file:${tarball}` },
    devDependencies: Object.fromEntries(
      ["typescript", "@types/node", "vitest", "@effect/vitest"].map((name) => [name, devPin(name)])
    )
  }, null, 2))
  const install = sh("npm", ["install", "--no-audit", "--no-fund", "--prefer-offline"], app, 300_000)
  if (!check(install.status === 0, `npm install of the tarball with effect@${effectPin} (${install.ms} ms)`, install.output)) {
    throw new Error("install failed")
  }

  // 3. Exactly one effect: the app's.
  const copies = []
  const findEffect = (nodeModules) => {
    for (const entry of readdirSync(nodeModules).filter((name) => !name.startsWith("."))) {
      const names = entry.startsWith("@") ? readdirSync(join(nodeModules, entry)).map((name) => `${entry}/${name}`) : [entry]
      for (const name of names) {
        if (name === "effect") copies.push(join(nodeModules, name))
        if (existsSync(join(nodeModules, name, "node_modules"))) findEffect(join(nodeModules, name, "node_modules"))
      }
    }
  }
  findEffect(join(app, "node_modules"))
  const versions = copies.map((path) => `${path}@${JSON.parse(readFileSync(join(path, "package.json"), "utf8")).version}`)
  check(
    copies.length === 1 && versions[0].endsWith(`@${effectPin}`),
    `exactly one copy of effect (${effectPin}) in the app's node_modules`,
    versions.join("\n")
  )
  const ls = sh("npm", ["ls", "effect", "--all"], app)
  check(ls.status === 0, "npm ls effect is clean", ls.output)

  // 4. A strict NodeNext consumer of every entry point, and the README's examples, from the installed package.
  // The Cordis type augmentations (`./cordis/*-types`) reference their host's Cordis package, which a
  // Cordis host has and this app does not; the repository's tests type-check them against both lines.
  const entries = Object.keys(manifest.exports).filter((subpath) =>
    subpath !== "./package.json" && !subpath.endsWith("-types")
  )
  const consumer = entries.map((subpath, i) =>
    `import * as entry${i} from "${posix.join("effect-bash", subpath)}"\nconsole.log(Object.keys(entry${i}).length > 0)\n`
  ).join("")
  check(
    checkExamples({
      dir: app,
      bin: (name) => join(app, "node_modules", ".bin", name),
      // The Cordis example needs a Cordis host and the harness packages, which this app does not install.
      skip: /from "(@deepseek-ai\/[\w-]+|cordis)"/,
      extraFiles: { "entry-points.ts": consumer },
      checkDependencies: true,
      log: (line) => log(`     ${line}`)
    }),
    `a strict NodeNext consumer of ${entries.join(", ")} and the README examples type-check and run`
  )

  // 5. The bundled bin, as installed (it needs none of the peers).
  const effectBash = join(app, "node_modules", ".bin", "effect-bash")
  const version = sh(effectBash, ["--version"], app, 60_000)
  check(version.status === 0 && version.stdout.includes(manifest.version), "effect-bash --version", version.output)
  const run = sh(effectBash, ["run", "--", "true"], app, 60_000)
  check(run.status === 0 && run.stdout === "(no output)\n", `effect-bash run -- true (${run.ms} ms)`, run.output)
  // stdin ends after the request: the server answers it, sees its transport closed and exits.
  const initialize = { jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "pack-check", version: "0" } } }
  const mcp = sh(effectBash, ["mcp"], app, 60_000, `${JSON.stringify(initialize)}\n`)
  const answer = (mcp.stdout ?? "").split("\n").filter((line) => line !== "").flatMap((line) => {
    try {
      return [JSON.parse(line)]
    } catch {
      return []
    }
  }).find((message) => message.id === 1)
  check(
    mcp.status === 0 && answer?.result?.serverInfo?.name === "effect-bash",
    "effect-bash mcp answers initialize",
    mcp.output
  )

  // 6. Hooks.
  const hooks = join(root, "scripts", "pack-check.d")
  for (const hook of existsSync(hooks) ? readdirSync(hooks).filter((name) => name.endsWith(".mjs")).sort() : []) {
    const run = (await import(pathToFileURL(join(hooks, hook)).href)).default
    check(await run({ app, log: (line) => log(`     ${line}`) }), `hook ${hook}`)
  }
} catch (error) {
  check(false, "pack check stopped", String(error))
} finally {
  if (process.argv.includes("--keep")) log(`kept ${work}`)
  else rmSync(work, { recursive: true, force: true })
}
log(ok ? "PASS pack check" : "FAIL pack check")
process.exit(ok ? 0 : 1)
