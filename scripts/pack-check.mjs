/**
 * The package as a user gets it (issue 11's "done when"): `npm pack`, then
 *   - the tarball has a LICENSE, no `dist/bench`, every source map's sources, none of the
 *     bundles' maps, and each shell program (`src/**\/*.sh`) beside its module in `dist/src`;
 *   - alone in an empty folder (what `npx effect-bash` installs) it brings at most
 *     {@link lightInstallLimit} packages, and there the command runs, `mcp --container-image` tells
 *     its client that docker-modem is missing, `effect-bash/promise` runs a command and closes, and
 *     `import("effect-bash")` says effect is missing;
 *   - in an app on Effect 4 (`--legacy-peer-deps`), `import("effect-bash")` names the version found,
 *     and `effect-bash/promise` runs under `Effect.tryPromise` with one `effect` in the tree;
 * and a fresh app that pins another 3.x patch of `effect` installs the tarball from the registry's
 * point of view, and
 *   - the app's node_modules holds exactly one `effect`, the app's own;
 *   - a strict NodeNext consumer (`skipLibCheck: false`) importing every entry point type-checks,
 *     and the README's examples type-check and run from the installed package;
 *   - the bundled `effect-bash` bin runs a command and answers an MCP `initialize`;
 *   - the installed modules that run the container wrapper, the sandbox's pinner and its network
 *     bridge read them.
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

/** The packages `npm install` put in `app` (its lockfile's entries, the app itself excepted). */
const installedPackages = (app) =>
  Object.entries(JSON.parse(readFileSync(join(app, "package-lock.json"), "utf8")).packages)
    .filter(([path, entry]) => path !== "" && entry.optional !== true).map(([path]) => path)

/** Runs `node --input-type=module -e program` in `cwd`. */
const nodeModule = (program, cwd) => sh(process.execPath, ["--input-type=module", "-e", program], cwd, 60_000)

/** The answer to a JSON-RPC `initialize` from `effect-bash mcp …args` run in `cwd`. */
const initializeAnswer = (effectBash, args, cwd) => {
  // stdin ends after the request: the server answers it, sees its transport closed and exits.
  const initialize = { jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "pack-check", version: "0" } } }
  const mcp = sh(effectBash, ["mcp", ...args], cwd, 60_000, `${JSON.stringify(initialize)}\n`)
  const answer = (mcp.stdout ?? "").split("\n").filter((line) => line !== "").flatMap((line) => {
    try {
      return [JSON.parse(line)]
    } catch {
      return []
    }
  }).find((message) => message.id === 1)
  return { mcp, answer }
}

/**
 * The most packages `npm install` of the tarball alone may bring: effect-bash and its one dependency
 * (the optional `koffi` and its platform's prebuilt binary are not counted).
 */
const lightInstallLimit = 2

/**
 * The packages whose install scripts npm names (npm 11 asks before it runs one), koffi's aside: its
 * `cnoke --prebuild` only checks for the prebuilt binary its platform package brings, and koffi loads
 * without it having run.
 */
const foreignInstallScripts = (output) => {
  const named = [...output.matchAll(/^npm warn install-scripts\s+(\S+)@\S+ \(/gm)].map((match) => match[1])
  const counted = Number(/(\d+) packages? ha(?:s|ve) install scripts/.exec(output)?.[1] ?? 0)
  const foreign = named.filter((name) => name !== "koffi")
  return counted > named.length ? [...foreign, `${counted - named.length} unnamed`] : foreign
}

/**
 * What `npx effect-bash` installs: the tarball alone, in an empty folder. No peer comes along (they
 * are all optional), no install script but koffi's runs, and what the folder holds runs: the command (`run`,
 * `mcp`, and `mcp --container-image` telling its client docker-modem is missing), and
 * `effect-bash/promise` from a plain Node program; the library entry says effect is missing.
 */
const lightInstall = (tarball) => {
  const app = join(work, "light")
  sh("mkdir", ["-p", app], work)
  writeFileSync(join(app, "package.json"), JSON.stringify({ name: "effect-bash-light", private: true, type: "module" }))
  const install = sh("npm", ["install", "--no-audit", "--no-fund", "--prefer-offline", tarball], app, 300_000)
  if (!check(install.status === 0, `npm install of the tarball alone (${install.ms} ms)`, install.output)) return
  const installed = installedPackages(app)
  check(
    installed.length <= lightInstallLimit && foreignInstallScripts(install.output).length === 0,
    `it brings ${installed.length} packages (at most ${lightInstallLimit}, koffi aside) and runs no install script but koffi's`,
    `${installed.join("\n")}\n${install.output}`
  )
  const effectBash = join(app, "node_modules", ".bin", "effect-bash")
  const run = sh(effectBash, ["run", "--", "echo", "light"], app, 60_000)
  check(run.status === 0 && run.stdout === "light\n", `there, effect-bash run -- echo light (${run.ms} ms)`, run.output)
  const served = initializeAnswer(effectBash, [], app)
  check(served.mcp.status === 0 && served.answer?.result?.serverInfo?.name === "effect-bash", "there, effect-bash mcp answers initialize", served.mcp.output)
  const refused = initializeAnswer(effectBash, ["--container-image", "effect-bash-pack-check:none"], app)
  check(
    refused.answer?.error?.message?.includes("the container executor needs the docker-modem package") === true &&
      refused.answer.error.message.includes("npx -y -p effect-bash -p docker-modem@5 effect-bash"),
    "there, mcp --container-image answers initialize with the missing docker-modem and the npx line that adds it",
    refused.mcp.output
  )
  const promise = nodeModule(`
    import { createEffectBash } from "effect-bash/promise"
    const bash = await createEffectBash()
    const ran = await bash.run("echo from-promise")
    const { taskId } = await bash.start("sleep 300")
    const killed = await bash.kill(taskId)
    await bash.close()
    console.log(JSON.stringify({ text: ran.text, killed: killed.isError }))
  `, app)
  check(
    promise.status === 0 && promise.stdout.trim() === JSON.stringify({ text: "from-promise\n", killed: false }),
    `there, a plain Node program runs a command and a task through effect-bash/promise and closes (${promise.ms} ms)`,
    promise.output
  )
  const library = nodeModule(`import("effect-bash").then(() => console.log("imported"), (error) => console.log(error.message))`, app)
  check(
    library.stdout.includes("effect-bash needs its peer dependency effect (3.x, from 3.22.2), which is not installed"),
    "there, import(\"effect-bash\") says effect is missing",
    library.output
  )
}

/**
 * An app on Effect 4 (npm's `latest`), installed as its user would (`--legacy-peer-deps`, since the
 * peer range refuses it): importing the library entry names the version it found, and the Promise
 * entry runs under `Effect.tryPromise`, with one `effect` in the tree, the app's.
 */
const effect4App = (tarball) => {
  const app = join(work, "effect4")
  sh("mkdir", ["-p", app], work)
  writeFileSync(join(app, "package.json"), JSON.stringify({ name: "effect-bash-effect4", private: true, type: "module" }))
  const install = sh("npm", ["install", "--no-audit", "--no-fund", "--prefer-offline", "--legacy-peer-deps", "effect@latest", tarball], app, 300_000)
  if (!check(install.status === 0, `npm install effect@latest and the tarball --legacy-peer-deps (${install.ms} ms)`, install.output)) return
  const version = JSON.parse(readFileSync(join(app, "node_modules", "effect", "package.json"), "utf8")).version
  const library = nodeModule(`import("effect-bash").then(() => console.log("imported"), (error) => console.log(error.message))`, app)
  check(
    library.stdout.includes(`effect-bash is built on Effect 3 and needs effect 3.x from 3.22.2, but this app has effect@${version}`),
    `in an app on effect@${version}, import("effect-bash") names that version`,
    library.output
  )
  const promise = nodeModule(`
    import { Effect } from "effect"
    import { createEffectBash } from "effect-bash/promise"
    const program = Effect.gen(function*() {
      const bash = yield* Effect.tryPromise(() => createEffectBash())
      const ran = yield* Effect.tryPromise(() => bash.run("echo from-effect-4"))
      yield* Effect.tryPromise(() => bash.close())
      return ran.text
    })
    console.log(JSON.stringify(await Effect.runPromise(program)))
  `, app)
  check(
    promise.status === 0 && promise.stdout.trim() === JSON.stringify("from-effect-4\n"),
    "there, effect-bash/promise runs a command under Effect.tryPromise",
    promise.output
  )
  const ls = sh("npm", ["ls", "effect", "--all", "--parseable"], app)
  const effects = ls.stdout.split("\n").filter((line) => /node_modules\/effect$/.test(line))
  check(effects.length === 1, "there, npm ls shows one effect, the app's", ls.output)
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
  const programs = [...files].filter((file) => file.startsWith("src/") && file.endsWith(".sh"))
  const unshipped = programs.filter((file) => !files.has(`dist/${file}`))
  check(
    programs.length > 0 && unshipped.length === 0,
    `the tarball has each shell program of src/ (${programs.length}) beside its module in dist/src`,
    unshipped.join("\n")
  )
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
  // The bundles' maps (megabytes, for debugging the build) stay here: `npx` downloads what runs.
  const binMaps = [...files].filter((file) => file.startsWith("dist/bin/") && file.endsWith(".map"))
  check(files.has(bin) && binMaps.length === 0, `the tarball has the bundled bin ${bin} and none of the bundles' maps`, binMaps.join("\n"))

  // 2a. The command and effect-bash/promise alone: the tarball installed into an empty folder.
  lightInstall(tarball)
  // 2b. An app on Effect 4.
  effect4App(tarball)

  // 2c. A fresh app on another patch of effect.
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
    await checkExamples({
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
  const { mcp, answer } = initializeAnswer(effectBash, [], app)
  check(
    mcp.status === 0 && answer?.result?.serverInfo?.name === "effect-bash",
    "effect-bash mcp answers initialize",
    mcp.output
  )

  // The library's modules read their shell programs from beside themselves when first needed.
  const internal = (module) => JSON.stringify(pathToFileURL(join(app, "node_modules", "effect-bash", "dist", "src", "layers", "internal", module)).href)
  const programsRead = nodeModule([
    `const { servedArgv } = await import(${internal("container/wrapper.js")})`,
    `const { pinOpener } = await import(${internal("sandbox/bwrap.js")})`,
    `const { bridgeArgv } = await import(${internal("network/bridge.js")})`,
    `console.log(servedArgv("serve")[4].includes("__effect_bash_token"), pinOpener(["/pinned"])[2].includes("exec \\"$@\\""), bridgeArgv({ socatPath: "/socat", httpSocket: "/http", socksSocket: "/socks" })[2].includes("the network bridge did not start"))`
  ].join("\n"), app)
  check(programsRead.stdout === "true true true\n", "the installed container wrapper, sandbox pinner and network bridge read their .sh files", programsRead.output)

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
