/**
 * Which of the host's two ways spawned a command: while it runs, a child of `node:child_process`
 * holds a process handle (`ProcessWrap`) in the host, one of `posix_spawn` none.
 */
import { Effect, Stream } from "effect"
import { BashExecutor } from "../../src/services/BashExecutor.js"

export type SpawnPath = "posix_spawn" | "child_process"

const processHandles = () => process.getActiveResourcesInfo().filter((resource) => resource === "ProcessWrap").length

/**
 * How the `BashExecutor` in context spawns a command now, with `request`'s other fields (the command
 * is killed as the run closes).
 */
export const spawnPathFor = (
  request: Omit<BashExecutor.Request, "command"> = {}
): Effect.Effect<SpawnPath, unknown, BashExecutor> =>
  Effect.gen(function*() {
    const bash = yield* BashExecutor
    const before = processHandles()
    const live = yield* bash.runStreaming(yield* bash.resolve({ ...request, command: "echo started; exec sleep 30" }))
    yield* live.output.pipe(Stream.take(1), Stream.runDrain)
    return processHandles() > before ? "child_process" : "posix_spawn"
  }).pipe(Effect.scoped)

/** How the `BashExecutor` in context spawns a plain command now. */
export const spawnPath = spawnPathFor()
