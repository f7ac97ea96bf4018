/**
 * Work item (m): what the launcher's spare bash saves a `bash` tool call. Two `BashStack.layer()`
 * graphs, one whose launcher keeps a spare and one whose launcher does not, each called through
 * `AgentTools.call("bash", …)` as a host calls it; every call comes after a pause (not counted), as
 * an agent's calls come between its model's answers, and the two take turns call by call (the first
 * of each pair alternating), so a busy machine slows them alike.
 */
import { ManagedRuntime } from "effect"
import { performance } from "node:perf_hooks"
import { setTimeout as sleep } from "node:timers/promises"
import * as BashStack from "../../src/BashStack.js"
import { spareSwitch } from "../../src/layers/internal/spawner/spare.js"
import { AgentTools } from "../../src/services/AgentTools.js"
import { median, round } from "../lib/stats.js"
import type { CallSpread } from "./calls.js"
import { spreadOf } from "./calls.js"

/** One pause's medians: the spare's per-call wall time against none's. */
export interface SparePause {
  readonly pauseMs: number
  readonly calls: number
  readonly spare: CallSpread
  readonly none: CallSpread
  /** Median with the spare over median without: below 1 is what the spare saves. */
  readonly ratio: number
}

/** A graph called through its `AgentTools`, its launcher with or without a spare. */
const makeTool = async (spare: boolean) => {
  const runtime = ManagedRuntime.make(BashStack.layer())
  spareSwitch.enabled = spare
  try {
    // The layer's launcher is started as the graph is built: only that launcher sees the switch.
    const tools = await runtime.runPromise(AgentTools).finally(() => (spareSwitch.enabled = true))
    let calls = 0
    return {
      call: async (command: string) => {
        const result = await runtime.runPromise(
          tools.call("bash", { command, description: "benchmark call" }, {
            callId: `bench-${++calls}`,
            session: { id: "bench-session", cwd: process.cwd() }
          })
        )
        if (result.isError) throw new Error(`bash tool call failed: ${result.text}`)
      },
      close: () => runtime.dispose()
    }
  } catch (error) {
    await runtime.dispose()
    throw error
  }
}

/** `calls` calls of `command` per graph after each pause in `pausesMs`, the graphs taking turns. */
export const measureSpare = async (
  pausesMs: ReadonlyArray<number>,
  calls: number,
  command: string,
  log: (line: string) => void
): Promise<ReadonlyArray<SparePause>> => {
  const spare = await makeTool(true)
  const none = await makeTool(false)
  try {
    for (let i = 0; i < 20; i++) {
      await spare.call(command)
      await none.call(command)
    }
    const rows: Array<SparePause> = []
    for (const pauseMs of pausesMs) {
      const times = { spare: [] as Array<number>, none: [] as Array<number> }
      for (let i = 0; i < calls; i++) {
        const pair = i % 2 === 0 ? (["spare", "none"] as const) : (["none", "spare"] as const)
        for (const which of pair) {
          await sleep(pauseMs)
          const start = performance.now()
          await (which === "spare" ? spare : none).call(command)
          times[which].push(performance.now() - start)
        }
      }
      const row: SparePause = {
        pauseMs,
        calls,
        spare: spreadOf(times.spare),
        none: spreadOf(times.none),
        ratio: round(median(times.spare) / median(times.none), 3)
      }
      log(`  ${pauseMs} ms pauses: spare ${row.spare.medianMs} ms, none ${row.none.medianMs} ms (${row.ratio}×)`)
      rows.push(row)
    }
    return rows
  } finally {
    await spare.close()
    await none.close()
  }
}
