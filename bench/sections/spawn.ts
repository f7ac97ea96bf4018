/**
 * Work items (a), (b) and (h): spawn overhead, measured with `true`.
 */
import { setTimeout as sleep } from "node:timers/promises"
import type { Runner } from "../runners/Runner.js"
import { timed } from "../lib/stats.js"

/** (a) Wall time in ms for `count` sequential `true` runs. */
export const sequentialTrue = (count: number) => async (runner: Runner): Promise<number> => {
  const { ms } = await timed(async () => {
    for (let i = 0; i < count; i++) await runner.run("true")
  })
  return ms
}

/** (b) Wall time in ms for `streams` concurrent streams, each running `each` sequential `true`. */
export const concurrentTrue = (streams: number, each: number) => async (runner: Runner): Promise<number> => {
  const stream = async () => {
    for (let i = 0; i < each; i++) await runner.run("true")
  }
  const { ms } = await timed(() => Promise.all(Array.from({ length: streams }, stream)))
  return ms
}

/**
 * (h) Wall time in ms of `count` sequential `true` runs with `pauseMs` between them (not counted), as
 * an agent calls: its model answers between two calls. What a contender does while idle shows here.
 */
export const pacedTrue = (count: number, pauseMs: number) => async (runner: Runner): Promise<number> => {
  let total = 0
  for (let i = 0; i < count; i++) {
    await sleep(pauseMs)
    total += (await timed(() => runner.run("true"))).ms
  }
  return total
}
