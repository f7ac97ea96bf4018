/**
 * The package's own version, read from the nearest `package.json` named `effect-bash` (the same
 * lookup works from `src/cli` under vitest and from the bundled `dist/bin` when installed).
 */
import { readFileSync } from "node:fs"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"

const findVersion = (from: string): string => {
  for (let dir = from; ; dir = dirname(dir)) {
    try {
      const pkg = JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) as { name?: unknown; version?: unknown }
      if (pkg.name === "effect-bash" && typeof pkg.version === "string") return pkg.version
    } catch {
      // no readable package.json here: keep walking up
    }
    if (dirname(dir) === dir) return "0.0.0"
  }
}

/**
 * The `effect-bash` package version (`0.0.0` if its `package.json` cannot be found).
 */
export const packageVersion: string = findVersion(dirname(fileURLToPath(import.meta.url)))
