/**
 * Where a `bash` call runs: a relative workdir is taken from the session's
 * canonical working directory, or from the sandbox workspace root when a policy is in force (the
 * session's cwd, else the executor's configured root, else its default workdir; then the workdir too
 * is canonical, so confinement and launch agree on it); an absolute workdir wins;
 * without a session the executor's default applies.
 */
import { realpathSync } from "node:fs"
import * as path from "node:path"
import type { BashExecutor } from "../services/BashExecutor.js"
import type { ToolSession } from "../services/ToolExecution.js"
import { fnWhenTraced } from "../services/internal/whenTraced.js"

/**
 * The request fields that place a call.
 */
export interface Placement {
  readonly workdir?: string
  readonly sandboxPolicy?: BashExecutor.SandboxPolicy
}

/**
 * A directory's filesystem identity (symlinks resolved); a path that cannot be resolved stays as
 * given, made absolute, and the spawn reports it. Resolved on the event loop: a local `realpath`
 * takes microseconds, while a round trip through the thread pool costs the call a wake-up of a pool
 * thread and of the loop, more than a tenth of a millisecond of its wall time.
 */
const canonicalDir = (dir: string): string => {
  try {
    return realpathSync.native(dir)
  } catch {
    return path.resolve(dir)
  }
}

const placeBody = function*(
  executor: BashExecutor["Type"],
  call: {
    readonly workdir: string | undefined
    readonly session: ToolSession | undefined
    readonly mode: BashExecutor.SandboxMode | undefined
    /** The session's own network allow entries, for a confined call. */
    readonly networkAllow?: ReadonlyArray<string>
  }
) {
  const given = call.session?.cwd
  const sessionDir = given === undefined ? undefined : canonicalDir(given)
  if (call.mode !== undefined) {
    const canonicalRoot = sessionDir ?? executor.workspaceRoot ?? canonicalDir(yield* executor.defaultWorkdir)
    // Spelled like the root (symlinks resolved), so a path through a link is judged where it really is.
    const workdir = call.workdir === undefined ? canonicalRoot : canonicalDir(path.resolve(canonicalRoot, call.workdir))
    // The session's directory as given (made absolute, not normalized: `..` after a link is the link
    // target's parent, as for the kernel): the sandbox resolves it again, watching the links on the way.
    const workspaceRoot = given === undefined ? canonicalRoot : path.isAbsolute(given) ? given : `${process.cwd()}/${given}`
    const networkAllow = call.networkAllow === undefined || call.networkAllow.length === 0 ? {} : { networkAllow: call.networkAllow }
    return { workdir, sandboxPolicy: { mode: call.mode, workspaceRoot, ...networkAllow } } satisfies Placement
  }
  if (call.workdir === undefined) return (sessionDir === undefined ? {} : { workdir: sessionDir }) satisfies Placement
  if (path.isAbsolute(call.workdir)) return { workdir: call.workdir } satisfies Placement
  const base = sessionDir ?? (yield* executor.defaultWorkdir)
  return { workdir: path.resolve(base, call.workdir) } satisfies Placement
}

/**
 * The workdir and sandbox policy of one call. `mode` is the call's effective sandbox mode (absent for
 * an unconfined executor). A span when a tracer is installed.
 */
export const placeCall = fnWhenTraced("bash.placeCall")(placeBody)
