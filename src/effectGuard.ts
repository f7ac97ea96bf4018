/**
 * The check an entry point makes before any module of effect-bash links against `effect`: that the
 * app's `effect` is installed and on the line this package is built on (3.x, from 3.22.2). Effect 4,
 * npm's `latest`, lacks modules this package imports (`effect/Either`), and a missing module fails the
 * link of the whole graph before any of its code runs: without this check an app on Effect 4 sees
 * only `ERR_MODULE_NOT_FOUND … effect/dist/Either.js`. So each entry point (`dist/src/entries/*.js`,
 * written by the build) calls it, then imports its modules.
 *
 * It resolves `effect` as this package's own imports do (`import.meta.resolve`, Node 20.6 and later;
 * on an older Node it checks nothing) and reads its version from its package.json: well under a
 * millisecond.
 *
 * @since 0.2.0
 */
import { readFileSync } from "node:fs"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"

/** The first `effect` this package runs on. */
const minimum = [3, 22, 2] as const

/** The install line of the peers every entry point needs. */
const installLine = "npm i effect@~3.22 @effect/platform@~0.97 @effect/platform-node@~0.108"

/** Where an app that is not on Effect 3 goes instead. */
const otherApps =
  "An app on Effect 4 (or on none) can use effect-bash/promise instead: a Promise API that carries its own Effect 3."

/**
 * The version in the package.json of the package that holds `file`, if that package is `effect`:
 * `effect/package.json` may not be exported, so the folders above its entry are read instead.
 */
const versionAbove = (file: string): string | undefined => {
  for (let directory = dirname(file); directory !== dirname(directory); directory = dirname(directory)) {
    try {
      const manifest = JSON.parse(readFileSync(join(directory, "package.json"), "utf8")) as { name?: unknown; version?: unknown }
      if (manifest.name === "effect" && typeof manifest.version === "string") return manifest.version
    } catch {
      // No package.json here (or a folder's own `{"type": …}` one): keep going up.
    }
  }
  return undefined
}

const isSupported = (version: string): boolean => {
  const [major, minor, patch] = version.split(/[.+-]/).map(Number)
  return major === minimum[0] &&
    (minor! > minimum[1] || (minor === minimum[1] && patch! >= minimum[2]))
}

/**
 * Throws an Error naming what is wrong when the app's `effect` is missing or not on 3.x from 3.22.2.
 *
 * @since 0.2.0
 * @category guards
 */
export const checkEffectVersion = (): void => {
  if (typeof import.meta.resolve !== "function") return
  let entry: string
  try {
    entry = import.meta.resolve("effect")
  } catch {
    throw new Error(`effect-bash needs its peer dependency effect (3.x, from 3.22.2), which is not installed: ${installLine}. ${otherApps}`)
  }
  const version = entry.startsWith("file:") ? versionAbove(fileURLToPath(entry)) : undefined
  if (version !== undefined && !isSupported(version)) {
    throw new Error(
      `effect-bash is built on Effect 3 and needs effect 3.x from 3.22.2, but this app has effect@${version}` +
        `${version.startsWith("4.") ? " (Effect 4)" : ""}: ${installLine}. ${otherApps}`
    )
  }
}
