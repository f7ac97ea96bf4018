/**
 * The launcher of the `BashExecutor` in context, found as the parent of its commands.
 */
import { Effect } from "effect"
import { BashExecutor } from "../../src/services/BashExecutor.js"
import { firstPid } from "./processes.js"

/** The parent of a command run now: the launcher, or the host while the launcher is not ready. */
export const parentOfCommand = Effect.gen(function*() {
  const bash = yield* BashExecutor
  const result = yield* bash.run(yield* bash.resolve({ command: "echo $PPID" }))
  return firstPid(result.stdout.text)
})

/**
 * The launcher's pid. Until the launcher is ready (bounded by the spawner) the host spawns commands
 * itself, so a first call may name the host: the host is never taken for the launcher (a test
 * signals it).
 */
export const launcherPid = Effect.gen(function*() {
  for (;;) {
    const pid = yield* parentOfCommand
    if (pid !== process.pid) return pid
    yield* Effect.sleep("20 millis")
  }
}).pipe(Effect.timeoutFail({ duration: "20 seconds", onTimeout: () => new Error("the launcher did not start within 20 s") }))
