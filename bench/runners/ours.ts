/**
 * Our executor: `LocalBashExecutor.layer(config)` on one `ManagedRuntime` reused for every call.
 */
import type { Layer } from "effect"
import { Effect, ManagedRuntime } from "effect"
import * as LocalBashExecutor from "../../src/layers/LocalBashExecutor.js"
import { BashExecutor } from "../../src/services/BashExecutor.js"
import type { Runner } from "./Runner.js"

/** The effect-bash contender, plus a way to run one request with every field under the caller's control. */
export interface OursRunner extends Runner {
  readonly execute: (request: BashExecutor.Request) => Promise<BashExecutor.RunResult>
}

/** Builds the runtime eagerly so layer construction is never billed to the first timed call. */
export const makeOursRunner = async (config: LocalBashExecutor.Settings.Input): Promise<OursRunner> => {
  const runtime = ManagedRuntime.make(LocalBashExecutor.layer(config))
  const executor = await runtime.runPromise(BashExecutor)
  const execute = (request: BashExecutor.Request) =>
    runtime.runPromise(Effect.flatMap(executor.resolve(request), executor.run))
  return {
    id: "ours",
    label: "effect-bash LocalBashExecutor",
    level: "executor",
    execute,
    run: async (command) => {
      await execute({ command })
    },
    runToFile: async (command) => {
      const result = await execute({ command })
      if (result.stdout.spillPath === undefined) {
        throw new Error(`no spill file reported (truncated: ${result.stdout.truncated}, exit ${result.exitCode})`)
      }
      return { path: result.stdout.spillPath }
    },
    close: () => runtime.dispose()
  }
}

/**
 * Any executor layer as a contender, on its own `ManagedRuntime` built before timing; `request` adds
 * fields to every call (a session, say).
 */
export const makeExecutorRunner = async (
  id: string,
  label: string,
  layer: Layer.Layer<BashExecutor, unknown>,
  request: Omit<BashExecutor.Request, "command"> = {}
): Promise<Runner> => {
  const runtime = ManagedRuntime.make(layer)
  try {
    const executor = await runtime.runPromise(BashExecutor)
    return {
      id,
      label,
      level: "executor",
      run: async (command) => {
        await runtime.runPromise(Effect.flatMap(executor.resolve({ ...request, command }), executor.run))
      },
      close: () => runtime.dispose()
    }
  } catch (error) {
    await runtime.dispose()
    throw error
  }
}
