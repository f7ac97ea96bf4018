/**
 * What a new child gets from the tick it started, whichever way it was spawned: its stdout and
 * stderr held (read from now on), its stdin, script (fd 3) and runner input written and ended.
 *
 * @internal
 */
import type { Readable, Writable } from "node:stream"
import type { ProcessSpawner } from "../../../services/ProcessSpawner.js"
import { holdPipe } from "./readPipes.js"
import type { ShellInvocation } from "./shellInvocation.js"

/** `stdio`: the host's ends, by the child's descriptor number (`null` where there is no pipe). */
export const handOverChild = (
  stdio: ReadonlyArray<Readable | Writable | null | undefined>,
  options: ProcessSpawner.Options,
  shell: ShellInvocation
): void => {
  // Read from this tick on: output of a command that exits before its reader starts is kept.
  holdPipe(stdio[1] as Readable)
  holdPipe(stdio[2] as Readable)
  // The command may exit without reading its input: EPIPE is expected, not a fault.
  const write = (fd: number | undefined, bytes: string | Uint8Array | undefined) => {
    const pipe = fd === undefined ? undefined : stdio[fd] as Writable | null | undefined
    if (bytes === undefined || !pipe) return
    pipe.on("error", () => {})
    pipe.end(bytes)
  }
  write(0, options.stdin)
  write(options.wrapper?.input?.fd, options.wrapper?.input?.bytes)
  write(3, shell.script)
}
