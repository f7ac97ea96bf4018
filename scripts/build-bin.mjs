/**
 * Bundles the `effect-bash` command into `dist/bin/` with esbuild:
 *
 * - `cli-<hash>.cjs`: `src/cli/main.ts` and all it imports, one CommonJS module written as the
 *   function expression Node would wrap it in (`(function (exports, require, module, __filename,
 *   __dirname) {…})`), which the executable compiles as it is (the hash is of its content). Each
 *   `import()` in the sources stays lazy: the modules reached only through it are evaluated when it
 *   runs (`run` evaluates neither the MCP server nor the demo tour).
 * - `mcp-sdk-<hash>.cjs`: the MCP SDK with its schemas (zod, ajv), written the same way. Only the MCP
 *   server uses it, so the CLI bundle requires it (see {@link mcpSdk}) and `run` and `demo` never
 *   read it.
 * - `effect-bash.js`: the executable (`src/cli/bin.ts`), which runs those bundles through V8 code
 *   caches kept beside them (see there), bound to each bundle's SHA-256 (computed here, embedded there).
 * - `promise.mjs`: the entry `effect-bash/promise` (`src/promise.ts`): the stack behind a Promise API,
 *   with its own Effect 3, for apps not on Effect 3.
 * - `package.json`: `{"type":"commonjs"}`, so Node runs the `.js` file as the CommonJS it is.
 *
 * The library entries are not bundled (tsc writes them to `dist/src`, and they share the app's
 * `effect`), except `effect-bash/promise`, whose types tsc writes (`dist/src/promise.d.ts`). The metafile (`dist/bin.meta.json`, not shipped) names the sources in each output file;
 * `dist/bin/THIRD-PARTY-LICENSES.txt` carries the bundled packages' licenses.
 *
 *   node scripts/build-bin.mjs
 */
import { build } from "esbuild"
import { createHash } from "node:crypto"
import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { createRequire } from "node:module"
import { basename, dirname, join } from "node:path"
import { fileURLToPath } from "node:url"

const root = join(dirname(fileURLToPath(import.meta.url)), "..")
const outdir = join(root, "dist", "bin")

/**
 * Optional packages stay out of the bundle: the command starts without them and imports them only for
 * the feature that needs them (`docker-modem` for the container flags, `node-pty` — a native module —
 * for `mcp --terminals`, `tar-stream` and `tar-fs` for the container executor's `BoxFiles`, which no
 * command uses, `koffi` — a native module — for the spawner's `posix_spawn`).
 */
const external = ["docker-modem", "koffi", "node-pty", "tar-fs", "tar-stream"]

/** The modules of the MCP SDK the sources import values from: `mcp-sdk-<hash>.cjs` holds these. */
const mcpSdkModules = ["@modelcontextprotocol/sdk/server/index.js", "@modelcontextprotocol/sdk/types.js"]

/**
 * In the CLI bundle, an import of an MCP SDK module becomes a `require` of the SDK's own bundle
 * (`file`, beside it), which the executable loads; an SDK module not in {@link mcpSdkModules} fails
 * the build.
 */
const mcpSdk = (file) => ({
  name: "mcp-sdk",
  setup(build) {
    build.onResolve({ filter: /^@modelcontextprotocol\/sdk(\/|$)/ }, (args) =>
      mcpSdkModules.includes(args.path)
        ? { path: args.path, namespace: "mcp-sdk" }
        : { errors: [{ text: `${args.path} is not in mcpSdkModules (scripts/build-bin.mjs)` }] })
    build.onResolve({ filter: /^\.\/mcp-sdk-\w+\.cjs$/ }, (args) => ({ path: args.path, external: true }))
    build.onLoad({ filter: /.*/, namespace: "mcp-sdk" }, (args) => ({
      contents: `module.exports = require(${JSON.stringify(`./${file}`)}).default[${JSON.stringify(args.path)}]`,
      loader: "js"
    }))
  }
})

/**
 * Node's modules that the command needs only on some paths (`node:crypto` for a spill file's name or
 * a temporary file, `node:readline` for a prompt on the terminal), which loading costs every start
 * milliseconds: each import of one gets an object whose properties require the module when first
 * read. The properties are those the module has in the Node that runs the build.
 */
const lazyNodeModules = ["crypto", "readline"]
const lazyNodeModule = {
  name: "lazy-node-module",
  setup(build) {
    const requireHere = createRequire(import.meta.url)
    build.onResolve({ filter: new RegExp(`^(node:)?(${lazyNodeModules.join("|")})$`) }, (args) => {
      const path = `node:${args.path.replace(/^node:/, "")}`
      // The lazy module's own `require` is of Node's module.
      return args.namespace === "lazy-node-module" ? { path, external: true } : { path, namespace: "lazy-node-module" }
    })
    build.onLoad({ filter: /.*/, namespace: "lazy-node-module" }, (args) => {
      const getters = Object.keys(requireHere(args.path)).map((key) =>
        `${JSON.stringify(key)}: { enumerable: true, get: () => load()[${JSON.stringify(key)}] }`
      )
      return {
        loader: "js",
        contents: `let loaded\nconst load = () => (loaded ??= require(${JSON.stringify(args.path)}))\n` +
          `module.exports = Object.defineProperties({}, { ${getters.join(", ")} })\n`
      }
    })
  }
}

/**
 * A bundled package's own source map is followed only when the sources it names exist (or it carries
 * them): some packages ship maps into sources they do not ship, and the bundle's map would name files
 * nobody has. Those packages are mapped to their JavaScript instead.
 */
const sourceMapURL = /\n\/\/# sourceMappingURL=(\S+)\s*$/
const completeInputMaps = {
  name: "complete-input-maps",
  setup(build) {
    build.onLoad({ filter: /[\\/]node_modules[\\/].*\.[cm]?js$/ }, (args) => {
      const source = readFileSync(args.path, "utf8")
      const url = sourceMapURL.exec(source)?.[1]
      if (url === undefined || url.startsWith("data:")) return undefined
      const mapPath = join(dirname(args.path), url)
      const complete = (() => {
        try {
          const { sources, sourceRoot = "", sourcesContent = [] } = JSON.parse(readFileSync(mapPath, "utf8"))
          return sources.every((name, i) =>
            typeof sourcesContent[i] === "string" || existsSync(join(dirname(mapPath), sourceRoot, name))
          )
        } catch {
          return false
        }
      })()
      return complete ? undefined : { contents: source.replace(sourceMapURL, "\n"), loader: "js" }
    })
  }
}

/**
 * A module reads its shell program from beside itself when first needed
 * (`readFileSync(new URL("./x.sh", import.meta.url), "utf8")`, see `build-programs.mjs`); in a
 * bundle, which is not beside it, that read becomes the program's text. Any other mention of a `.sh`
 * URL in a source fails the build: it would read a file the bundle does not have.
 */
const programRead = /(?:\b\w+\.)?readFileSync\(new URL\("\.\/([\w.-]+\.sh)", import\.meta\.url\), "utf8"\)/g
const inlinePrograms = {
  name: "inline-programs",
  setup(build) {
    build.onLoad({ filter: /[\\/]src[\\/].*\.ts$/ }, (args) => {
      const source = readFileSync(args.path, "utf8")
      if (!source.includes(".sh\"")) return undefined
      const contents = source.replace(programRead, (_, file) => JSON.stringify(readFileSync(join(dirname(args.path), file), "utf8")))
      const left = /new URL\("[^"]*\.sh"/.exec(contents)
      return left === null
        ? { contents, loader: "ts" }
        : { errors: [{ text: `${left[0]}: a shell program is read only as readFileSync(new URL("./x.sh", import.meta.url), "utf8")` }] }
    })
  }
}

/** The license text of every package with code in the bundle, for `THIRD-PARTY-LICENSES.txt`. */
const thirdPartyLicenses = (outputs) => {
  const inputs = Object.values(outputs).flatMap((output) =>
    Object.entries(output.inputs).filter(([, { bytesInOutput }]) => bytesInOutput > 0).map(([input]) => input)
  )
  const packages = new Set(
    inputs.flatMap((input) => {
      const match = /^(.*node_modules\/(?:@[^/]+\/)?[^/]+)\//.exec(input)
      return match === null ? [] : [match[1]]
    })
  )
  return [...packages].sort().map((dir) => {
    const manifest = JSON.parse(readFileSync(join(root, dir, "package.json"), "utf8"))
    const file = readdirSync(join(root, dir)).find((name) => /^(licen[sc]e|copying)(\.|$)/i.test(name))
    const text = file === undefined ? `(no license file; package.json says ${manifest.license})` : readFileSync(join(root, dir, file), "utf8").trim()
    return `${manifest.name}@${manifest.version} (${manifest.license})\n\n${text}\n`
  }).join(`\n${"-".repeat(72)}\n\n`)
}

/** What every build shares. */
const common = {
  absWorkingDir: root,
  outdir,
  bundle: true,
  platform: "node",
  target: "node20",
  treeShaking: true,
  minify: true,
  sourcemap: true,
  // `bin.ts` reads the bundle as latin1, exact for ASCII only.
  charset: "ascii",
  metafile: true,
  logLevel: "warning"
}

/**
 * Every output is CommonJS: Node starts a CommonJS program without setting up its ES module loader.
 * A CommonJS file has no `import.meta`: its URL is the file's own. The banner opens with the
 * `"use strict"` of the ES modules it is made of (esbuild's own comes after the banner, where it is no
 * directive), so every file runs in strict mode, as its sources do everywhere else.
 */
const commonJs = {
  format: "cjs",
  banner: { js: `"use strict";var __effectBashModuleUrl = require("node:url").pathToFileURL(__filename).href;` },
  define: { "import.meta.url": "__effectBashModuleUrl" }
}

/**
 * A bundle the executable loads: a CommonJS module written as its wrapper function. The wrapper is
 * written here rather than added to the text at each start: a start then compiles the file as read,
 * without first copying it into a longer string.
 */
const loadedBundle = {
  ...common,
  ...commonJs,
  banner: { js: `(function (exports, require, module, __filename, __dirname) {${commonJs.banner.js}` },
  footer: { js: "})" },
  entryNames: "[name]-[hash]",
  outExtension: { ".js": ".cjs" }
}

/** The one `.cjs` file of a build's outputs, by name. */
const cjsOf = (result) => basename(Object.keys(result.metafile.outputs).find((file) => file.endsWith(".cjs")))

rmSync(outdir, { recursive: true, force: true })
// Its default export maps each name in `mcpSdkModules` to that module.
const sdk = await build({
  ...loadedBundle,
  stdin: {
    contents: mcpSdkModules.map((name, i) => `import * as m${i} from ${JSON.stringify(name)}`).join("\n") +
      `\nexport default { ${mcpSdkModules.map((name, i) => `${JSON.stringify(name)}: m${i}`).join(", ")} }\n`,
    resolveDir: root,
    sourcefile: "mcp-sdk.js"
  },
  entryNames: "mcp-sdk-[hash]",
  plugins: [completeInputMaps]
})
const sdkBundle = cjsOf(sdk)
const cli = await build({
  ...loadedBundle,
  entryPoints: { cli: "src/cli/main.ts" },
  // An `import()` of an external (docker-modem) becomes a `require` in a promise: the bundle runs as a
  // `vm.Script`, where Node 20 runs no `import()` without --experimental-vm-modules. The bundle's own
  // `import()`s stay lazy either way.
  supported: { "dynamic-import": false },
  external,
  plugins: [inlinePrograms, lazyNodeModule, completeInputMaps, mcpSdk(sdkBundle)]
})
const bundle = cjsOf(cli)
/** Each bundle's SHA-256, which the executable's caches carry: V8 alone would take a cache of another bundle of the same length. */
const sha256 = (name) => createHash("sha256").update(readFileSync(join(outdir, name))).digest("hex")
const bin = await build({
  ...common,
  ...commonJs,
  entryPoints: { "effect-bash": "src/cli/bin.ts" },
  define: {
    ...commonJs.define,
    EFFECT_BASH_CLI_BUNDLE: JSON.stringify(bundle),
    EFFECT_BASH_MCP_SDK_BUNDLE: JSON.stringify(sdkBundle),
    EFFECT_BASH_BUNDLE_HASHES: JSON.stringify({ [bundle]: sha256(bundle), [sdkBundle]: sha256(sdkBundle) })
  }
})
// `effect-bash/promise`: an ES module like the library's entries, with its own Effect 3 inside. Its
// bundled CommonJS packages require Node's modules, which an ES module bundle does through a
// `require` of its own.
const promise = await build({
  ...common,
  format: "esm",
  entryPoints: { promise: "src/promise.ts" },
  outExtension: { ".js": ".mjs" },
  banner: { js: `import { createRequire as __effectBashRequire } from "node:module";const require = __effectBashRequire(import.meta.url);` },
  external,
  plugins: [inlinePrograms, completeInputMaps]
})
const builds = [sdk, cli, bin, promise]
const metafile = {
  inputs: Object.assign({}, ...builds.map((result) => result.metafile.inputs)),
  outputs: Object.assign({}, ...builds.map((result) => result.metafile.outputs))
}
writeFileSync(join(root, "dist", "bin.meta.json"), JSON.stringify(metafile))
writeFileSync(join(outdir, "THIRD-PARTY-LICENSES.txt"), thirdPartyLicenses(metafile.outputs))
writeFileSync(join(outdir, "package.json"), `${JSON.stringify({ type: "commonjs" })}\n`)
