/**
 * Work item (l), run in a fresh node process per host heap size:
 * `node --expose-gc --max-old-space-size=N dist/bench/heap-child.js <retainedMiB> <rounds> <block> <warmUp>`.
 *
 * Starts our executor with `posix_spawn` (the default), with `directSpawn`, and the reference
 * executor, and both `bash` tools through a harness registry (the tool's row is what a model's call
 * costs, on the same executors); then keeps `<retainedMiB>` of live JS heap and times calls of `true`
 * through each, interleaved. A `child_process` spawn forks the host, and a fork copies the page tables
 * of the whole heap: the cost `posix_spawn` keeps off each call. Prints one JSON line (a `HeapCalls`); the
 * reference's row is absent, with a line on stderr, when it is not installed.
 */
import type { CallRow, HeapCalls } from "./lib/results.js"
import { collectGarbage, median, MiB, round } from "./lib/stats.js"
import { makeOursToolRunner, makeReferenceRunners } from "./runners/harness.js"
import { makeOursRunner } from "./runners/ours.js"
import type { Runner } from "./runners/Runner.js"
import { interleavedCalls, spreadOf } from "./sections/calls.js"

// 512 KiB of doubles per array: small enough to stay a fast (non-dictionary) array.
const chunkLength = 64 * 1024

/** `mib` of live arrays of doubles, every page written. */
const retain = (mib: number): Array<Array<number>> =>
  Array.from({ length: Math.ceil((mib * MiB) / (chunkLength * 8)) }, (_, chunk) =>
    Array.from({ length: chunkLength }, (_, i) => chunk + i + 0.5))

/** The median of each round's block of `block` calls (`interleavedCalls` keeps them in round order). */
const roundMedians = (times: ReadonlyArray<number>, block: number): Array<number> =>
  Array.from({ length: Math.floor(times.length / block) }, (_, r) => round(median(times.slice(r * block, (r + 1) * block)), 3))

/** What the host keeps live while it measures; module-level, so it lives until the process exits. */
const kept: Array<Array<Array<number>>> = []

const main = async () => {
  const [retainArg = "", roundsArg = "", blockArg = "", warmUpArg = ""] = process.argv.slice(2)
  const retainedMiB = Number(retainArg)
  const rounds = Number(roundsArg)
  const block = Number(blockArg)
  const warmUp = Number(warmUpArg)
  if (!(retainedMiB >= 0) || !(rounds > 0) || !(block > 0) || !(warmUp >= 0)) {
    throw new Error("usage: heap-child <retainedMiB> <rounds> <block> <warmUp>")
  }
  const reference = await makeReferenceRunners({}, (line) => process.stderr.write(`${line}\n`))
  const runners: Array<Runner> = [
    { ...await makeOursRunner({}), label: "effect-bash LocalBashExecutor, posix_spawn (default)" },
    { ...await makeOursRunner({ directSpawn: true }), id: "ours-direct", label: "effect-bash LocalBashExecutor, directSpawn" },
    ...(reference === undefined ? [] : [reference.executor]),
    await makeOursToolRunner(),
    ...(reference === undefined ? [] : [reference.tool])
  ]
  try {
    // Warmed up before the heap grows, so the retained heap is not what the warm-up allocated.
    for (const runner of runners) for (let i = 0; i < warmUp; i++) await runner.run("true")
    kept.push(retain(retainedMiB))
    collectGarbage()
    for (const runner of runners) for (let i = 0; i < 5; i++) await runner.run("true")
    const times = await interleavedCalls(runners, rounds, block)
    const memory = process.memoryUsage()
    const rows: Array<CallRow> = runners.map((r) => ({
      id: r.id,
      label: r.label,
      ...spreadOf(times[r.id]!),
      roundMediansMs: roundMedians(times[r.id]!, block)
    }))
    const report: HeapCalls = {
      retainedMiB,
      heapUsedMiB: round(memory.heapUsed / MiB, 0),
      rssMiB: round(memory.rss / MiB, 0),
      rows
    }
    process.stdout.write(JSON.stringify(report) + "\n")
  } finally {
    for (const runner of runners) await runner.close()
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? error.stack : String(error)}\n`)
  process.exitCode = 1
})
