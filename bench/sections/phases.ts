/**
 * Work item (i): where a call's wall time goes, without marks in anyone's code. Each call runs a
 * command that appends bash's clock (`$EPOCHREALTIME`, bash 5) to a file of its contender; the host's
 * clock read around the call splits the call at that moment: the time until the command ran (host
 * work, the spawn, bash's start-up) and the time after it (bash's exit, the exit seen, the result
 * built). Every contender runs the same command, so the append's own cost is in every row alike.
 */
import { readFile, rm } from "node:fs/promises"
import { join } from "node:path"
import { performance } from "node:perf_hooks"
import { median } from "../lib/stats.js"
import type { Runner } from "../runners/Runner.js"

/** One contender's split of a call, medians over every call, in ms. */
export interface Phases {
  readonly id: string
  readonly label: string
  readonly untilCommandMs: number
  readonly afterCommandMs: number
  readonly wholeCallMs: number
}

const singleQuoted = (text: string) => `'${text.replaceAll("'", "'\\''")}'`

// The host's clock on bash's scale: ms since the epoch, to the microsecond.
const hostNow = () => performance.timeOrigin + performance.now()

// `$EPOCHREALTIME` is seconds with the locale's decimal separator; bash before 5.0 prints nothing.
const bashClockMs = (line: string) => (line === "" ? Number.NaN : Number(line.replace(",", ".")) * 1000)

/** The phases, or why there are none. */
export type PhasesResult = { readonly phases: Array<Phases> } | { readonly missing: string }

/**
 * `count` sequential calls per contender and round, for `rounds` rounds in rotated order. None where
 * bash has no `$EPOCHREALTIME`, or where a mark falls outside its call (the two clocks disagree).
 */
export const measurePhases = async (
  runners: ReadonlyArray<Runner>,
  count: number,
  rounds: number,
  dir: string
): Promise<PhasesResult> => {
  const calls = new Map(runners.map((runner) => [runner.id, [] as Array<{ start: number; end: number }>]))
  const file = (runner: Runner) => join(dir, `phases-${runner.id}.txt`)
  for (let round = 0; round < rounds; round++) {
    for (let i = 0; i < runners.length; i++) {
      const runner = runners[(round + i) % runners.length]!
      const command = `printf '%s\\n' "$EPOCHREALTIME" >> ${singleQuoted(file(runner))}`
      for (let call = 0; call < count; call++) {
        const start = hostNow()
        await runner.run(command)
        calls.get(runner.id)!.push({ start, end: hostNow() })
      }
    }
  }
  const phases: Array<Phases> = []
  for (const runner of runners) {
    const marks = (await readFile(file(runner), "utf8")).trim().split("\n").map(bashClockMs)
    await rm(file(runner), { force: true })
    const timed = calls.get(runner.id)!
    if (marks.length !== timed.length || marks.some((mark) => !Number.isFinite(mark))) {
      return { missing: "this bash has no $EPOCHREALTIME (bash 5)" }
    }
    if (timed.some((call, i) => marks[i]! < call.start || marks[i]! > call.end)) {
      return { missing: `a command's mark fell outside its call (${runner.id}): the host's clock and bash's disagree` }
    }
    phases.push({
      id: runner.id,
      label: runner.label,
      untilCommandMs: median(timed.map((call, i) => marks[i]! - call.start)),
      afterCommandMs: median(timed.map((call, i) => call.end - marks[i]!)),
      wholeCallMs: median(timed.map((call) => call.end - call.start))
    })
  }
  return { phases }
}
