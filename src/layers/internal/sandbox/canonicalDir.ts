/**
 * A directory's filesystem identity, as confinement and the sandbox sessions compare it (the tool's
 * placement, `tool/placement.ts`, resolves a call's directory by the same rule), and
 * whether one canonical directory lies within another.
 *
 * @internal
 */
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"

/**
 * `dir` with symlinks resolved; one that cannot be resolved stays as given, made absolute (the
 * runner or the spawn reports it).
 */
export const canonicalDirSync = (dir: string): string => {
  try {
    return NodeFs.realpathSync(dir)
  } catch {
    return NodePath.resolve(dir)
  }
}

/** Whether `dir` is `root` or lies below it; both canonical. */
export const within = (dir: string, root: string): boolean =>
  dir === root || dir.startsWith(root === "/" ? "/" : `${root}/`)
