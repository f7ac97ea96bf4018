/**
 * Where the runner is, found once as the layer starts.
 *
 * @internal
 */
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"

/**
 * `name` as `PATH` finds it now; a name with a slash, or one not found, as given (its spawn reports
 * it). Found before any command runs: a confined command may write into a directory on `PATH` (one
 * under a writable home), and a runner looked up at each call would then be the command's program,
 * run on the host.
 */
export const runnerPath = (name: string, path: string | undefined = process.env.PATH): string => {
  if (name.includes("/")) return name
  for (const dir of (path ?? "").split(":")) {
    if (dir === "") continue
    const candidate = NodePath.resolve(dir, name)
    try {
      NodeFs.accessSync(candidate, NodeFs.constants.X_OK)
      if (NodeFs.statSync(candidate).isFile()) return candidate
    } catch {
      // Not here: the next directory.
    }
  }
  return name
}
