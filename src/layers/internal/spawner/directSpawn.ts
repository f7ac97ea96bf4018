/**
 * The host's spawn through `node:child_process`: the way where `posix_spawn` cannot serve a request
 * (or is not used).
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import * as ChildProcess from "node:child_process"
import * as NodeFs from "node:fs"
import type { ProcessSpawner } from "../../../services/ProcessSpawner.js"
import { SpawnError } from "../../../services/ProcessSpawner.js"
import { capEchoed } from "../../../services/internal/requestChecks.js"
import { errnoCode } from "./groupLiveness.js"
import { handOverChild } from "./childInputs.js"
import type { ShellInvocation } from "./shellInvocation.js"
import { SpawnedChild } from "./spawnedChild.js"

/** A spawn that failed before a process started, as Node reported it. */
export const spawnFailure = (error: unknown, options: ProcessSpawner.Options): SpawnError => {
  const code = errnoCode(error)
  // Node reports a missing cwd as `spawn bash ENOENT`, blaming bash; say what is really missing.
  const message = code === "ENOENT" && !NodeFs.existsSync(options.cwd)
    ? `workdir does not exist: ${capEchoed(options.cwd)} (ENOENT)`
    : error instanceof Error ? error.message : String(error)
  return new SpawnError({ code, message, cause: error })
}

/**
 * Spawns `file` with `args` for `options`, the leader of a new session and group, and resumes with
 * the child once it has a pid (`track` is told in the same tick), or with why it did not start.
 */
export const spawnDirect = (
  options: ProcessSpawner.Options,
  shell: ShellInvocation,
  file: string,
  args: ReadonlyArray<string>,
  stdio: ReadonlyArray<"pipe" | "ignore" | number>,
  track: (pgid: number) => void,
  resume: (effect: Effect.Effect<SpawnedChild, SpawnError>) => void
): void => {
  let child: ChildProcess.ChildProcess
  try {
    child = ChildProcess.spawn(file, args, {
      cwd: options.cwd,
      detached: true,
      env: options.env,
      stdio: stdio as Array<"pipe" | "ignore" | number>
    })
  } catch (error) {
    // Node throws at once for values it refuses (a NUL byte in cwd or env); a spawn failure too.
    return resume(Effect.fail(spawnFailure(error, options)))
  }
  // A child without a pid was never started (and may have no pipes): Node reports why in an `error`
  // event on the next tick. With a pid it runs already, and its pipes are open to write.
  if (child.pid === undefined) {
    child.once("error", (error) => resume(Effect.fail(spawnFailure(error, options))))
    return
  }
  track(child.pid)
  // A started child reports no more errors here (no IPC, no `child.kill`); none may crash the host.
  child.on("error", () => {})
  handOverChild(child.stdio, options, shell)
  resume(Effect.succeed(SpawnedChild.Direct({ child })))
}
