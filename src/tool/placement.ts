/**
 * Where a `bash` call runs: a relative workdir is taken from the session's
 * canonical working directory, or from the sandbox workspace root when a policy is in force (the
 * session's cwd, else the executor's configured root, else its default workdir; then the workdir too
 * is canonical, so confinement and launch agree on it); an absolute workdir wins;
 * without a session the executor's default applies.
 */
import { realpath } from "node:fs/promises"
import * as path from "node:path"
import * as Effect from "effect/Effect"
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

const awaitCanonical = (resolving: Promise<string>, dir: string): Effect.Effect<string> =>
  Effect.tryPromise(() => resolving).pipe(Effect.orElseSucceed(() => path.resolve(dir)))

/**
 * A directory's filesystem identity (symlinks resolved); a path that cannot be resolved stays as
 * given, made absolute, and the spawn reports it.
 */
const canonicalDir = (dir: string): Effect.Effect<string> => Effect.suspend(() => awaitCanonical(realpath(dir), dir))

/**
 * A call's session directory: as the session gives it (made absolute), and canonical.
 */
export interface SessionDir {
  readonly given: string
  readonly canonical: Effect.Effect<string>
}

/**
 * The directory of a call's session, its canonical form resolving from now on: the thread pool works
 * on it while the call goes on with other things, and `canonical` awaits it.
 */
export const startSessionDir = (session: ToolSession | undefined): Effect.Effect<SessionDir | undefined> =>
  Effect.sync(() => {
    const dir = session?.cwd
    if (dir === undefined) return undefined
    const resolving = realpath(dir)
    // Never awaited when the call is interrupted first: its failure is not unhandled.
    resolving.catch(() => {})
    // Not normalized: `..` after a link is the link target's parent, as for the kernel.
    const given = path.isAbsolute(dir) ? dir : `${process.cwd()}/${dir}`
    return { given, canonical: awaitCanonical(resolving, dir) }
  })

const placeBody = function*(
  executor: BashExecutor["Type"],
  call: {
    readonly workdir: string | undefined
    /** From {@link startSessionDir}. */
    readonly sessionDir: SessionDir | undefined
    readonly mode: BashExecutor.SandboxMode | undefined
    /** The session's own network allow entries, for a confined call. */
    readonly networkAllow?: ReadonlyArray<string>
  }
) {
  const sessionDir = call.sessionDir === undefined ? undefined : yield* call.sessionDir.canonical
  if (call.mode !== undefined) {
    const canonicalRoot = sessionDir ?? executor.workspaceRoot ?? (yield* Effect.flatMap(executor.defaultWorkdir, canonicalDir))
    // Spelled like the root (symlinks resolved), so a path through a link is judged where it really is.
    const workdir = call.workdir === undefined
      ? canonicalRoot
      : yield* canonicalDir(path.resolve(canonicalRoot, call.workdir))
    // The session's directory as given: the sandbox resolves it again, watching the links on the way.
    const workspaceRoot = call.sessionDir?.given ?? canonicalRoot
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
