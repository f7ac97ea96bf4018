/**
 * Writes the package's entry points, `dist/src/entries/<name>.js`, one per module whose declarations
 * package.json's `exports` names (which tsc wrote): each first checks the app's `effect`
 * (`src/effectGuard.ts`), then imports that module and exports what it exports.
 *
 * Why a wrapper: every module of the package is linked before any of it runs, so a check imported
 * first by `src/index.ts` would never run when `effect` is missing or is Effect 4 (the link fails
 * with `ERR_MODULE_NOT_FOUND`); the wrapper imports the package's modules only after its check, with
 * an `import()` awaited at its top level. Its export names are the module's own, read here by
 * importing it; its types are the module's (`exports[…].types`).
 *
 *   node scripts/build-entries.mjs
 */
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { dirname, join, posix } from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"

const root = join(dirname(fileURLToPath(import.meta.url)), "..")
const manifest = JSON.parse(readFileSync(join(root, "package.json"), "utf8"))
const entries = join(root, "dist", "src", "entries")

/**
 * The entries of `exports` that are wrappers, as `[entry file, module file]` relative to the package
 * root: the module is the one whose declarations the entry's `types` names.
 */
const wrapped = Object.values(manifest.exports).flatMap((target) =>
  typeof target === "object" && target.default?.startsWith("./dist/src/entries/")
    ? [[target.default.slice(2), target.types.slice(2).replace(/\.d\.ts$/, ".js")]]
    : []
)

rmSync(entries, { recursive: true, force: true })
mkdirSync(entries, { recursive: true })
for (const [entry, module] of wrapped) {
  const names = Object.keys(await import(pathToFileURL(join(root, module)).href)).sort()
  const relative = (file) => `./${posix.relative(posix.dirname(entry), file)}`.replace(/^\.\/\.\.\//, "../")
  const named = names.filter((name) => name !== "default")
  writeFileSync(join(root, entry), [
    "// Written by scripts/build-entries.mjs: the check of the app's effect, then the module's exports.",
    `import { checkEffectVersion } from "${relative("dist/src/effectGuard.js")}"`,
    "checkEffectVersion()",
    `const module = await import("${relative(module)}")`,
    ...(named.length === 0 ? [] : [`export const { ${named.join(", ")} } = module`]),
    ...(names.includes("default") ? ["export default module.default"] : []),
    ""
  ].join("\n"))
}
