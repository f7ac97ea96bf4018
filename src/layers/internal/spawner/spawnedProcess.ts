/**
 * A spawned child as the port's `ProcessSpawner.Process`: its exit (once, to an awaiter and to
 * listeners), its pipes for a `PipeReader`, its group's signals and liveness.
 *
 * @internal
 */
import { Deferred, Effect, FiberId } from "effect"
import type { EventEmitter } from "node:events"
import type { Readable } from "node:stream"
import type { ProcessSpawner } from "../../../services/ProcessSpawner.js"
import { groupLiveness } from "./groupLiveness.js"
import { signalGroupSync, signalNamespaceMembersSync } from "./groupSignals.js"
import { PipeReader } from "./readPipes.js"
import type { SpawnedChild } from "./spawnedChild.js"

export const spawnedProcess = (spawned: SpawnedChild, options: ProcessSpawner.Options): ProcessSpawner.Process => {
  const child = spawned.child
  const exited = Deferred.unsafeMake<ProcessSpawner.Exit>(FiberId.none)
  let result: ProcessSpawner.Exit | undefined
  let listeners: Array<(exit: ProcessSpawner.Exit) => void> = []
  const settle = (exitCode: number | null, signal: NodeJS.Signals | null) => {
    const exit = { exitCode, signal }
    result = exit
    Deferred.unsafeDone(exited, Effect.succeed(exit))
    const waiting = listeners
    listeners = []
    for (const listener of waiting) listener(exit)
  }
  const alreadyExited = child.exitCode !== null || child.signalCode !== null ||
    (spawned._tag === "Launched" && spawned.child.exited)
  // Both kinds emit one `exit` with Node's code and signal.
  const emitter: EventEmitter = child
  if (alreadyExited) settle(child.exitCode, child.signalCode)
  else emitter.once("exit", settle)
  const pid = child.pid!
  return {
    pid,
    openPipes: (sinks: ProcessSpawner.OutputSinks) =>
      new PipeReader({ stdout: child.stdout as Readable, stderr: child.stderr as Readable }, sinks),
    exit: Deferred.await(exited),
    onExit: (listener: (exit: ProcessSpawner.Exit) => void) => {
      if (result !== undefined) {
        listener(result)
        return () => {}
      }
      listeners.push(listener)
      return () => {
        listeners = listeners.filter((each) => each !== listener)
      }
    },
    signalGroup: (signal: ProcessSpawner.GroupSignal) =>
      Effect.sync(() =>
        signal === "SIGTERM" && options.wrapper?.pidNamespace === true
          ? signalNamespaceMembersSync(pid, signal)
          : signalGroupSync(pid, signal)
      ),
    groupAlive: Effect.sync(groupLiveness(pid))
  }
}
