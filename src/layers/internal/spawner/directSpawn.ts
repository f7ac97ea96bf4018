/**
 * The host's own spawn: the way when the launcher cannot serve a request (or is not used).
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import * as ChildProcess from "node:child_process"
import * as NodeFs from "node:fs"
import type { Readable, Writable } from "node:stream"
import type { ProcessSpawner } from "../../../services/ProcessSpawner.js"
import { SpawnError } from "../../../services/ProcessSpawner.js"
import { capEchoed } from "../../../services/internal/requestChecks.js"
import { errnoCode } from "./groupLiveness.js"
import { holdPipe } from "./readPipes.js"
import type { ShellInvocation } from "./shellInvocation.js"
import { SpawnedChild } from "./spawnedChild.js"
import type { Stdio } from "./stdio.js"

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
  stdio: Stdio,
  track: (pgid: number) => void,
  resume: (effect: Effect.Effect<SpawnedChild, SpawnError>) => void
): void => {
  const input = options.wrapper?.input
  let child: ChildProcess.ChildProcess
  try {
    child = ChildProcess.spawn(file, args, {
      cwd: options.cwd,
      detached: true,
      env: options.env,
      stdio: stdio.direct(options.stdin !== undefined, shell.script !== undefined, input?.fd) as Array<
        "pipe" | "ignore" | number
      >
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
  // Read from this tick on: output of a command that exits before its reader starts is kept.
  holdPipe(child.stdout as Readable)
  holdPipe(child.stderr as Readable)
  track(child.pid)
  // A started child reports no more errors here (no IPC, no `child.kill`); none may crash the host.
  child.on("error", () => {})
  // The command may exit without reading its input: EPIPE is expected, not a fault.
  if (options.stdin !== undefined && child.stdin) {
    child.stdin.on("error", () => {})
    child.stdin.end(options.stdin)
  }
  const inputPipe = input === undefined ? undefined : child.stdio[input.fd] as Writable | null | undefined
  if (input !== undefined && inputPipe) {
    inputPipe.on("error", () => {})
    inputPipe.end(input.bytes)
  }
  const scriptPipe = child.stdio[3] as Writable | null | undefined
  if (shell.script !== undefined && scriptPipe) {
    scriptPipe.on("error", () => {})
    scriptPipe.end(shell.script)
  }
  resume(Effect.succeed(SpawnedChild.Direct({ child })))
}
