/**
 * A spawned child as the port's `ProcessSpawner.Process`: its exit (once, to an awaiter and to
 * listeners), its pipes for a `PipeReader`, its group's signals and liveness.
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import type { EventEmitter } from "node:events"
import type { Readable } from "node:stream"
import type { ProcessSpawner } from "../../../services/ProcessSpawner.js"
import { makeExitLatch } from "./exitLatch.js"
import { groupLiveness } from "./groupLiveness.js"
import { signalGroupSync, signalNamespaceMembersSync } from "./groupSignals.js"
import { PipeReader } from "./readPipes.js"
import type { SpawnedChild } from "./spawnedChild.js"

export const spawnedProcess = (spawned: SpawnedChild, options: ProcessSpawner.Options): ProcessSpawner.Process => {
  const child = spawned.child
  const latch = makeExitLatch()
  const settle = (exitCode: number | null, signal: NodeJS.Signals | null) => latch.settle({ exitCode, signal })
  const alreadyExited = child.exitCode !== null || child.signalCode !== null ||
    (spawned._tag === "Posix" && spawned.child.exited)
  // Both kinds emit one `exit` with Node's code and signal.
  const emitter: EventEmitter = child
  if (alreadyExited) settle(child.exitCode, child.signalCode)
  else emitter.once("exit", settle)
  const pid = child.pid!
  return {
    pid,
    openPipes: (sinks: ProcessSpawner.OutputSinks) =>
      new PipeReader({ stdout: child.stdout as Readable, stderr: child.stderr as Readable }, sinks),
    exit: latch.exit,
    onExit: latch.onExit,
    signalGroup: (signal: ProcessSpawner.GroupSignal) =>
      Effect.sync(() =>
        signal === "SIGTERM" && options.wrapper?.pidNamespace === true
          ? signalNamespaceMembersSync(pid, signal)
          : signalGroupSync(pid, signal)
      ),
    groupAlive: Effect.sync(groupLiveness(pid))
  }
}
