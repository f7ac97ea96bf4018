/**
 * Work item (g): what each sandbox mode, and containment, adds to one call of `true`, against the
 * plain local executor. Each executor runs on its own `ManagedRuntime`, built before timing.
 */
import { mkdtemp, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import type { Layer } from "effect"
import { Effect, ManagedRuntime } from "effect"
import * as LocalBashExecutor from "../../src/layers/LocalBashExecutor.js"
import * as SandboxBashExecutor from "../../src/layers/SandboxBashExecutor.js"
import { BashExecutor } from "../../src/services/BashExecutor.js"
import type { ModeCost } from "../lib/results.js"
import { median, round } from "../lib/stats.js"
import type { Runner } from "../runners/Runner.js"
import { interleavedRounds } from "./rounds.js"
import { sequentialTrue } from "./spawn.js"

const runnerOver = async (id: string, label: string, layer: Layer.Layer<BashExecutor, unknown>): Promise<Runner> => {
  const runtime = ManagedRuntime.make(layer)
  const executor = await runtime.runPromise(BashExecutor)
  return {
    id,
    label,
    level: "executor",
    run: async (command) => {
      await runtime.runPromise(Effect.flatMap(executor.resolve({ command }), executor.run))
    },
    close: () => runtime.dispose()
  }
}

/** Median ms per call of each executor over `rounds` × `count` sequential `true`. */
export const measureModes = async (count: number, rounds: number): Promise<Array<ModeCost>> => {
  const root = await mkdtemp(join(tmpdir(), "effect-bash-bench-modes-"))
  const runners = [
    await runnerOver("local", "LocalBashExecutor", LocalBashExecutor.layer()),
    await runnerOver("contain", "LocalBashExecutor, contain", LocalBashExecutor.layer({ contain: true })),
    await runnerOver("read-only", "SandboxBashExecutor, read-only", SandboxBashExecutor.layer({ cwd: root })),
    await runnerOver(
      "workspace-write",
      "SandboxBashExecutor, workspace-write",
      SandboxBashExecutor.layer({ cwd: root, sandboxMode: "workspace-write" })
    ),
    await runnerOver(
      "danger-full-access",
      "SandboxBashExecutor, danger-full-access",
      SandboxBashExecutor.layer({ cwd: root, sandboxMode: "danger-full-access" })
    )
  ]
  try {
    // Warm up, and probe the runner before anything is timed.
    for (const runner of runners) for (let i = 0; i < 10; i++) await runner.run("true")
    const samples = await interleavedRounds(runners, rounds, sequentialTrue(count))
    const perCall = (id: string) => median(samples.values[id]!) / count
    return runners.map((runner) => ({
      id: runner.id,
      label: runner.label,
      msPerCall: round(perCall(runner.id), 2),
      addedMs: round(perCall(runner.id) - perCall("local"), 2)
    }))
  } finally {
    for (const runner of runners) await runner.close()
    await rm(root, { recursive: true, force: true })
  }
}
