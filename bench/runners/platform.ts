/**
 * `@effect/platform` Command through platform-node's `NodeCommandExecutor` — for comparison only
 * (the library never spawns with it: it never escalates to SIGKILL, waits without bound in an
 * uninterruptible finalizer and leaks `&` children).
 */
import * as Command from "@effect/platform/Command"
import { NodeCommandExecutor, NodeFileSystem, NodeSink } from "@effect/platform-node"
import { Effect, Layer, ManagedRuntime, Stream } from "effect"
import { createWriteStream } from "node:fs"
import { join } from "node:path"
import type { Runner } from "./Runner.js"
import { bashArgs } from "./Runner.js"

const ExecutorLive = NodeCommandExecutor.layer.pipe(Layer.provide(NodeFileSystem.layer))

let fileCounter = 0

/** Builds the Command contender on one runtime that is reused for every call. */
export const makePlatformRunner = (): Runner => {
  const runtime = ManagedRuntime.make(ExecutorLive)
  const bash = (command: string) => Command.make("bash", ...bashArgs(command))

  const collect = (command: string) =>
    Effect.scoped(
      Effect.gen(function* () {
        const process = yield* Command.start(bash(command))
        yield* Effect.all([Stream.runCollect(process.stdout), Stream.runCollect(process.stderr), process.exitCode], {
          concurrency: "unbounded"
        })
      })
    )

  const toFile = (command: string, path: string) =>
    Effect.scoped(
      Effect.gen(function* () {
        const process = yield* Command.start(bash(command))
        const file = NodeSink.fromWritable(() => createWriteStream(path, { flags: "wx", mode: 0o600 }), (e) => e)
        yield* Effect.all([Stream.run(process.stdout, file), Stream.runCollect(process.stderr), process.exitCode], {
          concurrency: "unbounded"
        })
      })
    )

  return {
    id: "platform",
    label: "@effect/platform Command",
    level: "process",
    run: (command) => runtime.runPromise(collect(command)),
    runToFile: async (command, dir) => {
      const path = join(dir, `platform-${process.pid}-${++fileCounter}.out`)
      await runtime.runPromise(toFile(command, path))
      return { path }
    },
    close: () => runtime.dispose()
  }
}
