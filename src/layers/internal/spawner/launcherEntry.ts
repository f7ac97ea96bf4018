/**
 * Where the launcher's program (`launcherMain.ts`, compiled) is: the file `launcherMain.js` next to
 * the module that starts it. Compiled by tsc, that is `dist/src/layers/internal/spawner/`; in a bundle,
 * the bundle's own directory, where the bundle must emit `launcherMain.ts` as a second entry point
 * named `launcherMain.js`.
 *
 * @internal
 */
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { fileURLToPath } from "node:url"

/** The launcher's program file name, next to the module (or bundle) that starts it. */
export const launcherEntryName = "launcherMain.js"

/**
 * The launcher's program for the module at `from` (an `import.meta.url`): its sibling
 * {@link launcherEntryName}. A TypeScript source run as it is (a test runner) has no compiled
 * sibling: its sibling compiled under `dist/` at the same place in the tree stands in.
 */
export const launcherEntryPath = (from: string = import.meta.url): string => {
  const sibling = fileURLToPath(new URL(launcherEntryName, from))
  if (!from.endsWith(".ts")) return sibling
  const source = `${NodePath.sep}src${NodePath.sep}`
  const at = sibling.lastIndexOf(source)
  return at === -1 ? sibling : `${sibling.slice(0, at)}${NodePath.sep}dist${sibling.slice(at)}`
}

/** The launcher's program is not where the spawner looks for it: the package is built or bundled without it. */
export class LauncherEntryMissing extends Data.TaggedError("LauncherEntryMissing")<{ readonly path: string }> {
  override get message(): string {
    return `the launcher's program is missing at ${this.path} (an incomplete install or build; a bundle that ` +
      `contains the spawner needs ${launcherEntryName} emitted next to it)`
  }
}

/** The launcher's program for the module at `from`, once it is there. */
export const findLauncherEntry = Effect.fn("NodeProcessSpawner.findLauncherEntry")(function*(from?: string) {
  const path = launcherEntryPath(from)
  if (!NodeFs.existsSync(path)) return yield* new LauncherEntryMissing({ path })
  return path
})
