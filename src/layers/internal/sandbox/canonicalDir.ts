/**
 * A directory's filesystem identity, spelled the way placement and confinement both compare it.
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
