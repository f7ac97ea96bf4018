/**
 * Copies the shell programs (`src/**\/*.sh`) beside the modules tsc wrote to `dist/src`, which read
 * each from beside themselves (`new URL("./x.sh", import.meta.url)`) when first needed.
 *
 *   node scripts/build-programs.mjs
 */
import { cpSync, readdirSync } from "node:fs"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"

const root = join(dirname(fileURLToPath(import.meta.url)), "..")

for (const file of readdirSync(join(root, "src"), { recursive: true })) {
  if (file.endsWith(".sh")) cpSync(join(root, "src", file), join(root, "dist", "src", file))
}
