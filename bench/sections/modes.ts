/**
 * Work item (g): what each sandbox mode, and containment, adds to one call of `true`, against the
 * plain local executor. Each executor runs on its own `ManagedRuntime`, built before timing.
 */
import { mkdtemp, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import * as LocalBashExecutor from "../../src/layers/LocalBashExecutor.js"
import * as SandboxBashExecutor from "../../src/layers/SandboxBashExecutor.js"
import type { ModeCost } from "../lib/results.js"
import { median, round } from "../lib/stats.js"
import { makeExecutorRunner } from "../runners/ours.js"
import { interleavedRounds } from "./rounds.js"
import { sequentialTrue } from "./spawn.js"

/** Median ms per call of each executor over `rounds` × `count` sequential `true`. */
export const measureModes = async (count: number, rounds: number): Promise<Array<ModeCost>> => {
  const root = await mkdtemp(join(tmpdir(), "effect-bash-bench-modes-"))
  const runners = [
    await makeExecutorRunner("local", "LocalBashExecutor", LocalBashExecutor.layer()),
    await makeExecutorRunner("contain", "LocalBashExecutor, contain", LocalBashExecutor.layer({ contain: true })),
    await makeExecutorRunner("read-only", "SandboxBashExecutor, read-only", SandboxBashExecutor.layer({ cwd: root })),
    await makeExecutorRunner(
      "workspace-write",
      "SandboxBashExecutor, workspace-write",
      SandboxBashExecutor.layer({ cwd: root, sandboxMode: "workspace-write" })
    ),
    await makeExecutorRunner(
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
