/**
 * `npm run bench`: raw child_process, execa, @effect/platform Command, the reference executor
 * (dsh-bash-local) and ours side by side on the same work, and the reference `bash` tool and ours
 * through a real harness registry; then RSS and settle-time checks of ours, then model-text cleaning.
 * Prints Markdown tables and writes `bench/results.json`, `bench/results.md` and `bench/results.svg`
 * (wall time per call). `--quick` shrinks every item for a smoke run; `--only=model-text` runs item (f)
 * alone, `--only=per-call` items (a), (b), (h) (wall time, host CPU and JS allocation per call) and (i)
 * (where a call's time goes) alone and `--only=throughput` item (c) alone — results are then printed
 * but not written. `--only=cold-start` runs item (j) alone, `--only=container` item (k) (a call in a
 * warm container) and `--only=heap` item (l) (posix_spawn, direct spawn and the reference in a small and a
 * large host), and prints it; with `--write` it also replaces that item and its targets in
 * `bench/results.json` and renders `bench/results.md` again. `--only=network` (item (m)) and
 * `--only=terminals` (item (n): a terminal's `echo hi` round trip and open, ours against the
 * reference's) are printed, not written.
 */
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises"
import { loadavg, tmpdir } from "node:os"
import { join } from "node:path"
import { performance } from "node:perf_hooks"
import { fileURLToPath } from "node:url"
import { describeMachine } from "./lib/machine.js"
import {
  renderColdStart,
  renderContainer,
  renderHeap,
  renderMarkdown,
  renderModes,
  renderNetwork,
  renderPerCall,
  renderPhases,
  renderTargets
} from "./lib/markdown.js"
import type {
  BenchResults,
  CallRow,
  ColdStart,
  Comparison,
  ContainerCalls,
  HeapCalls,
  HeapItem,
  ModelTextTiming,
  NetworkItem,
  PerCall,
  RssReport,
  Settle,
  Target
} from "./lib/results.js"
import { judge } from "./lib/results.js"
import { median, MiB, percentile, round } from "./lib/stats.js"
import { renderPerCallSvg } from "./lib/svg.js"
import { execaRunner } from "./runners/execa.js"
import { makeOursToolRunner, makeReferenceRunners } from "./runners/harness.js"
import { makeOursRunner } from "./runners/ours.js"
import { makePlatformRunner } from "./runners/platform.js"
import { rawRunner } from "./runners/raw.js"
import type { Runner } from "./runners/Runner.js"
import { measureColdStart } from "./sections/coldStart.js"
import { interleavedRounds } from "./sections/rounds.js"
import type { Samples } from "./sections/rounds.js"
import { measureRss } from "./sections/rss.js"
import { oursSettle, rawSettle } from "./sections/settle.js"
import { concurrentTrue, pacedTrue, sequentialTrue } from "./sections/spawn.js"
import { measureModelText } from "./sections/modelText.js"
import { measureContainer } from "./sections/container.js"
import { measureHeap } from "./sections/heap.js"
import { measureModes } from "./sections/modes.js"
import { measureNetwork } from "./sections/network.js"
import { measureTerminals } from "./sections/terminals.js"
import type { Phases } from "./sections/phases.js"
import { measurePhases } from "./sections/phases.js"
import { outputToFile } from "./sections/throughput.js"

const quick = process.argv.includes("--quick")
const onlyModelText = process.argv.includes("--only=model-text")
const onlyPerCall = process.argv.includes("--only=per-call")
const onlyThroughput = process.argv.includes("--only=throughput")
const onlyContainer = process.argv.includes("--only=container")
const onlyHeap = process.argv.includes("--only=heap")
const onlyNetwork = process.argv.includes("--only=network")
const onlyTerminals = process.argv.includes("--only=terminals")
const onlyColdStart = process.argv.includes("--only=cold-start")
const settings = {
  /**
   * Calls each contender makes before anything is timed. V8 keeps optimizing a path for hundreds of
   * calls, and ours has more JavaScript than the reference's: in one run (100-call blocks, 2026-12-07)
   * our executor's host CPU per call was 2.45 ms in the block after 20 calls and 1.3 ms around call
   * 500, the reference's 1.94 and 1.65 ms. With 20 calls the first rounds timed our warm-up.
   */
  warmUpCalls: quick ? 20 : 500,
  /**
   * (a) in 15 blocks of 100 calls per contender rather than 5 of 300: on a shared machine the load
   * swings within seconds, and a block of 300 calls (3 s) could take a burst one contender alone.
   */
  sequentialCount: quick ? 30 : 100,
  sequentialRounds: quick ? 1 : 15,
  concurrentStreams: 8,
  concurrentEach: quick ? 5 : 50,
  spawnRounds: quick ? 1 : 5,
  pacedCount: quick ? 10 : 50,
  pacedPauseMs: 20,
  pacedRounds: quick ? 1 : 3,
  phasesCount: quick ? 20 : 200,
  phasesRounds: quick ? 1 : 3,
  outputBytes: quick ? 16 * MiB : 256 * MiB,
  outputRounds: quick ? 1 : 3,
  oursMaxSpillBytes: 512 * MiB,
  rssSmallBytes: quick ? 16 * MiB : 64 * MiB,
  rssLargeBytes: quick ? 64 * MiB : 1024 * MiB,
  rssDefaultMaxSpillBytes: 64 * MiB,
  rssSpillAllMaxSpillBytes: 2048 * MiB,
  rssRounds: quick ? 1 : 3,
  settleTimeoutMs: 200,
  settleGraceMs: 500,
  settleRounds: 3,
  modesCount: quick ? 20 : 100,
  modesRounds: quick ? 1 : 5,
  containerRounds: quick ? 1 : 5,
  containerBlock: quick ? 3 : 8,
  heapSmallMiB: 0,
  heapLargeMiB: quick ? 256 : 1200,
  heapRounds: quick ? 1 : 20,
  heapBlock: quick ? 10 : 40,
  /** Allowed difference between 1 GiB and 64 MiB RSS growth for "about the same". */
  rssSameWithinBytes: 16 * MiB,
  modelTextSmallBytes: 256 * 1024,
  modelTextLargeBytes: 1024 * 1024,
  modelTextRounds: 5,
  networkCount: quick ? 5 : 20,
  networkRounds: quick ? 1 : 5,
  coldStartRounds: quick ? 3 : 10,
  coldStartRssRounds: quick ? 1 : 3
} as const

const log = (line: string) => process.stderr.write(`${line}\n`)

const compare = (id: string, title: string, unit: Comparison["unit"], calls: number, samples: Samples): Comparison => {
  const rawMedian = median(samples.values["raw"]!)
  const rawCpu = median(samples.cpuMs["raw"]!)
  const contenders = Object.fromEntries(
    Object.entries(samples.values).map(([runnerId, values]) => {
      const m = median(values)
      const cpu = median(samples.cpuMs[runnerId]!)
      return [runnerId, {
        median: round(m, 3),
        samples: values.map((v) => round(v, 3)),
        ratioToRaw: round(m / rawMedian, 3),
        cpuMs: round(cpu, 1),
        cpuRatioToRaw: round(cpu / rawCpu, 3),
        allocatedKiB: round(median(samples.allocatedBytes[runnerId]!) / 1024, 1)
      }]
    })
  )
  log(`  ${title}: ${Object.entries(contenders).map(([k, v]) => `${k} ${round(v.median)} ${unit} (${v.ratioToRaw}×, cpu ${v.cpuMs} ms)`).join(", ")}`)
  return { id, title, unit, calls, contenders }
}

/** Per-call rows from (a) sequential, (b) concurrent and (h) paced, one per contender, in the runners' order. */
const perCallRows = (runners: ReadonlyArray<Runner>, [a, b, h]: PerCallItems): Array<PerCall> =>
  runners.map((runner) => {
    const perCall = (c: Comparison) => {
      const stat = c.contenders[runner.id]!
      return {
        wallMs: round(stat.median / c.calls, 3),
        cpuMs: round(stat.cpuMs / c.calls, 3),
        allocatedKiB: round(stat.allocatedKiB / c.calls, 1)
      }
    }
    return {
      id: runner.id,
      label: runner.label,
      level: runner.level,
      sequential: perCall(a),
      concurrent: perCall(b),
      paced: { wallMs: perCall(h).wallMs }
    }
  })

/**
 * Every contender: raw, execa, Command, the reference executor and ours, the reference tool and ours
 * (the reference ones only when `dsh-subprocess-local` is installed; `notes` says why not).
 */
const makeRunners = async (oursConfig: Parameters<typeof makeOursRunner>[0]) => {
  const notes: Array<string> = []
  const reference = await makeReferenceRunners({ maxSpillBytes: settings.oursMaxSpillBytes }, (line) => {
    log(line)
    notes.push(line)
  })
  const runners: Array<Runner> = [
    rawRunner,
    execaRunner,
    makePlatformRunner(),
    ...(reference === undefined ? [] : [reference.executor]),
    await makeOursRunner(oursConfig),
    ...(reference === undefined ? [] : [reference.tool]),
    await makeOursToolRunner()
  ]
  return {
    runners,
    notes,
    close: async () => {
      for (const runner of runners) await runner.close()
    }
  }
}

const warmUp = async (runners: ReadonlyArray<Runner>, dir?: string) => {
  log("warming up")
  for (const runner of runners) {
    for (let i = 0; i < settings.warmUpCalls; i++) await runner.run("true")
    if (dir !== undefined && runner.runToFile !== undefined) await outputToFile(MiB, dir)(runner)
  }
}

type PerCallItems = readonly [Comparison, Comparison, Comparison]

const runPerCallItems = async (runners: ReadonlyArray<Runner>): Promise<PerCallItems> => {
  const s = settings
  log(`(a) ${s.sequentialCount} sequential true × ${s.sequentialRounds}`)
  const a = compare(
    "a",
    `(a) ${s.sequentialCount} sequential \`true\``,
    "ms",
    s.sequentialCount,
    await interleavedRounds(runners, s.sequentialRounds, sequentialTrue(s.sequentialCount))
  )
  log(`(b) ${s.concurrentStreams}×${s.concurrentEach} concurrent true × ${s.spawnRounds}`)
  const b = compare(
    "b",
    `(b) ${s.concurrentStreams} concurrent streams × ${s.concurrentEach} \`true\``,
    "ms",
    s.concurrentStreams * s.concurrentEach,
    await interleavedRounds(runners, s.spawnRounds, concurrentTrue(s.concurrentStreams, s.concurrentEach))
  )
  log(`(h) ${s.pacedCount} sequential true, ${s.pacedPauseMs} ms apart × ${s.pacedRounds}`)
  const h = compare(
    "h",
    `(h) ${s.pacedCount} sequential \`true\`, ${s.pacedPauseMs} ms apart (pauses not counted)`,
    "ms",
    s.pacedCount,
    await interleavedRounds(runners, s.pacedRounds, pacedTrue(s.pacedCount, s.pacedPauseMs))
  )
  return [a, b, h]
}

const spread = (samples: ReadonlyArray<number>) => ({
  median: round(median(samples), 1),
  max: round(Math.max(...samples), 1),
  samples: samples.map((s) => round(s, 1))
})

const runThroughput = async (runners: ReadonlyArray<Runner>, dir: string): Promise<Comparison> => {
  const s = settings
  log(`(c) ${s.outputBytes / MiB} MiB to a file × ${s.outputRounds}`)
  return compare(
    "c",
    `(c) ${s.outputBytes / MiB} MiB stdout → file`,
    "MiB/s",
    1,
    await interleavedRounds(runners.filter((r) => r.runToFile !== undefined), s.outputRounds, outputToFile(s.outputBytes, dir))
  )
}

/** Item (i); why it is missing, if it is, goes to `notes`. */
const runPhases = async (
  runners: ReadonlyArray<Runner>,
  dir: string,
  notes: Array<string>
): Promise<Array<Phases> | undefined> => {
  log(`(i) where a call's time goes: ${settings.phasesCount} sequential calls × ${settings.phasesRounds}`)
  const result = await measurePhases(runners, settings.phasesCount, settings.phasesRounds, dir)
  if ("missing" in result) {
    log(`  left out: ${result.missing}`)
    notes.push(`(i) left out: ${result.missing}`)
    return undefined
  }
  for (const p of result.phases) log(`  ${p.id}: ${round(p.untilCommandMs, 3)} ms until the command, ${round(p.afterCommandMs, 3)} ms after it`)
  return result.phases
}

const runComparisons = async (
  runners: ReadonlyArray<Runner>,
  dir: string,
  notes: Array<string>
): Promise<{ readonly comparisons: Array<Comparison>; readonly phases: Array<Phases> | undefined }> => {
  await warmUp(runners, dir)
  const comparisons = [...await runPerCallItems(runners), await runThroughput(runners, dir)]
  return { comparisons, phases: await runPhases(runners, dir, notes) }
}

/** `--only=throughput`: item (c) alone, printed, nothing written. */
const mainThroughput = async () => {
  const dir = await mkdtemp(join(tmpdir(), "effect-bash-bench-"))
  const { runners, close } = await makeRunners({ maxSpillBytes: settings.oursMaxSpillBytes })
  try {
    const fileRunners = runners.filter((r) => r.runToFile !== undefined)
    await warmUp(fileRunners, dir)
    const c = await runThroughput(fileRunners, dir)
    process.stdout.write(`${c.title}: ${Object.entries(c.contenders).map(([id, v]) => `${id} ${round(v.median, 0)} MiB/s`).join(", ")}\n`)
  } finally {
    await close()
    await rm(dir, { recursive: true, force: true })
  }
}

/** `--only=per-call`: items (a), (b), (h) and (i) alone, printed with their targets, nothing written. */
const mainPerCall = async () => {
  const dir = await mkdtemp(join(tmpdir(), "effect-bash-bench-"))
  const { runners, notes, close } = await makeRunners({})
  try {
    await warmUp(runners)
    const perCall = perCallRows(runners, await runPerCallItems(runners))
    const phases = await runPhases(runners, dir, notes)
    process.stdout.write(
      [renderPerCall(perCall), ...(phases === undefined ? [] : [renderPhases(phases)]), renderTargets(judgePerCall(perCall))]
        .join("\n\n") + "\n"
    )
  } finally {
    await close()
    await rm(dir, { recursive: true, force: true })
  }
}

const runRss = async (): Promise<Array<RssReport>> => {
  const { rssSmallBytes, rssLargeBytes, rssDefaultMaxSpillBytes, rssSpillAllMaxSpillBytes } = settings
  const runs: Array<[RssReport["contender"], number]> = [
    ["ours", rssDefaultMaxSpillBytes],
    ["ours", rssSpillAllMaxSpillBytes],
    ["raw", 0]
  ]
  // One fresh process per measurement varies by several MiB (raw's 1 GiB growth measured 23 and 33 MiB
  // in two runs): each case runs `rssRounds` times, the contenders taking turns, and reports its median.
  const rounds: Array<Array<RssReport>> = runs.flatMap(() => [[], []])
  for (let pass = 0; pass < settings.rssRounds; pass++) {
    for (const [index, [contender, maxSpill]] of runs.entries()) {
      for (const [size, bytes] of [rssSmallBytes, rssLargeBytes].entries()) {
        log(`(d) ${bytes / MiB} MiB through ${contender}${contender === "ours" ? `, maxSpillBytes ${maxSpill / MiB} MiB` : ""} (fresh process)`)
        const report = await measureRss(contender, bytes, maxSpill)
        log(`  growth ${round(report.growth / MiB)} MiB in ${round(report.elapsedMs, 0)} ms`)
        rounds[index * 2 + size]!.push(report)
      }
    }
  }
  return rounds.map((reports) => [...reports].sort((a, b) => a.growth - b.growth)[Math.floor(reports.length / 2)]!)
}

const runSettle = async (): Promise<Array<Settle>> => {
  const { settleTimeoutMs: timeoutMs, settleGraceMs: graceMs, settleRounds } = settings
  const ours = await makeOursRunner({ graceMs })
  try {
    const cases = [
      { id: "e1", command: "sleep 100" },
      { id: "e2", command: "trap '' TERM; sleep 100" }
    ]
    const results: Array<Settle> = []
    for (const { id, command } of cases) {
      log(`(e) settle of \`${command}\` × ${settleRounds}`)
      const oursSamples: Array<number> = []
      const rawSamples: Array<number> = []
      for (let i = 0; i < settleRounds; i++) {
        oursSamples.push(await oursSettle(ours, command, timeoutMs))
        rawSamples.push(await rawSettle(command, timeoutMs, graceMs))
      }
      results.push({ id, command, timeoutMs, graceMs, ours: spread(oursSamples), raw: spread(rawSamples) })
      log(`  effect-bash ${round(median(oursSamples), 0)} ms, raw ${round(median(rawSamples), 0)} ms`)
    }
    return results
  } finally {
    await ours.close()
  }
}

const runModelText = (): Array<ModelTextTiming> => {
  const { modelTextSmallBytes, modelTextLargeBytes, modelTextRounds } = settings
  log(`(f) model-text cleaning of ${modelTextSmallBytes / 1024} and ${modelTextLargeBytes / 1024} KiB × ${modelTextRounds}`)
  const timings = measureModelText([modelTextSmallBytes, modelTextLargeBytes], modelTextRounds)
  for (const t of timings) log(`  ${t.input}, ${t.kib} KiB: ${round(t.medianMs, 1)} ms`)
  return timings
}

const judgeModelText = (timings: ReadonlyArray<ModelTextTiming>): Array<Target> => {
  const c1 = (kib: number) => timings.find((t) => t.input.startsWith("C1") && t.kib === kib)!.medianMs
  const small = c1(settings.modelTextSmallBytes / 1024)
  const large = c1(settings.modelTextLargeBytes / 1024)
  return [
    judge("f", "cleaning 256 KiB of C1 controls (was 13 s when quadratic)", small, "<=", 100, "ms"),
    // Linear: 4× the input takes about 4× the time; quadratic would take 16×.
    judge("f", "cleaning 1 MiB / 256 KiB of C1 controls, time ratio", large / small, "<=", 6, "×")
  ]
}

const ratioTarget = (id: string, description: string, measured: number, limit: number) =>
  judge(id, description, round(measured, 3), "<=", limit, "×")

/** Issue 12's per-call targets: ours against the reference at both levels, and host CPU against raw. */
const judgePerCall = (perCall: ReadonlyArray<PerCall>): Array<Target> => {
  const row = (id: string) => perCall.find((p) => p.id === id)
  const raw = row("raw")!
  const ours = row("ours")!
  const targets: Array<Target> = []
  const versus = (mine: PerCall | undefined, theirs: PerCall | undefined, what: string) => {
    if (mine === undefined || theirs === undefined) return
    targets.push(
      ratioTarget("a", `${what}, wall time per call, sequential`, mine.sequential.wallMs / theirs.sequential.wallMs, 1),
      ratioTarget("b", `${what}, wall time per call, 8 concurrent`, mine.concurrent.wallMs / theirs.concurrent.wallMs, 1)
    )
  }
  versus(ours, row("reference"), "effect-bash executor / reference executor")
  versus(row("ours-tool"), row("reference-tool"), "effect-bash `bash` tool / reference tool (registry)")
  targets.push(
    ratioTarget("a", "host CPU per call, effect-bash executor / raw, sequential", ours.sequential.cpuMs / raw.sequential.cpuMs, 1.5)
  )
  return targets
}

const judgeAll = (
  comparisons: ReadonlyArray<Comparison>,
  perCall: ReadonlyArray<PerCall>,
  rss: ReadonlyArray<RssReport>,
  settle: ReadonlyArray<Settle>
): Array<Target> => {
  const throughput = comparisons.find((c) => c.id === "c")!.contenders["ours"]!.ratioToRaw
  const targets: Array<Target> = [
    ...judgePerCall(perCall),
    judge("c", "output to file, effect-bash / raw throughput", throughput, ">=", 0.8, "×")
  ]
  const growth = (contender: RssReport["contender"], maxSpill: number, bytes: number) =>
    rss.find((r) => r.contender === contender && (contender === "raw" || r.maxSpillBytes === maxSpill) && r.outputBytes === bytes)!.growth
  const rawLarge = growth("raw", 0, settings.rssLargeBytes)
  for (const maxSpill of new Set(rss.filter((r) => r.contender === "ours").map((r) => r.maxSpillBytes))) {
    const small = growth("ours", maxSpill, settings.rssSmallBytes)
    const large = growth("ours", maxSpill, settings.rssLargeBytes)
    const where = `maxSpillBytes ${maxSpill / MiB} MiB`
    targets.push(
      ratioTarget("d", `RSS growth, ${settings.rssLargeBytes / MiB} MiB output, effect-bash / raw, ${where}`, large / rawLarge, 1.3),
      judge("d", `RSS growth difference ${settings.rssLargeBytes / MiB} − ${settings.rssSmallBytes / MiB} MiB, ${where}`, round((large - small) / MiB), "<", settings.rssSameWithinBytes / MiB, "MiB")
    )
  }
  for (const s of settle) {
    const limit = s.id === "e1" ? s.timeoutMs + 50 : s.timeoutMs + s.graceMs + 50
    targets.push(judge("e", `settle of \`${s.command}\` after timeout (median)`, s.ours.median, "<=", limit, "ms"))
  }
  return targets
}

/** `--only=model-text`: item (f) alone, printed, nothing written. */
const mainModelText = () => {
  const timings = runModelText()
  const targets = judgeModelText(timings)
  for (const t of targets) log(`${t.pass ? "PASS" : "MISS"} (f) ${t.description}: ${round(t.measured)} ${t.unit}`)
}

const runModes = async () => {
  log(`(g) per-call cost of each sandbox mode: ${settings.modesCount} sequential true × ${settings.modesRounds}`)
  const modes = await measureModes(settings.modesCount, settings.modesRounds)
  for (const mode of modes) log(`  ${mode.label}: ${mode.msPerCall} ms/call (${mode.addedMs >= 0 ? "+" : ""}${mode.addedMs} ms)`)
  return modes
}

const runContainer = async (): Promise<ContainerCalls> => {
  const { containerRounds: rounds, containerBlock: block } = settings
  log(`(k) a call in a warm container: ${rounds} × ${block} sequential true per contender, interleaved`)
  const date = new Date().toISOString()
  const start = round(loadavg()[0]!)
  const k = await measureContainer(rounds, block)
  if ("missing" in k) log(`  skipped: ${k.missing}`)
  else for (const r of k.rows) log(`  ${r.label}: median ${round(r.medianMs)} ms, p90 ${round(r.p90Ms)} ms`)
  return { date, loadAverage: { start, end: round(loadavg()[0]!) }, ...k }
}

const runHeap = async (): Promise<HeapItem> => {
  const { heapSmallMiB, heapLargeMiB, heapRounds: rounds, heapBlock: block } = settings
  const date = new Date().toISOString()
  const start = round(loadavg()[0]!)
  const heaps: Array<HeapCalls> = []
  for (const retainedMiB of [heapSmallMiB, heapLargeMiB]) {
    log(`(l) posix_spawn, directSpawn, the reference and both tools, host keeping ${retainedMiB} MiB of heap: ${rounds} × ${block} true each (fresh process)`)
    const h = await measureHeap(retainedMiB, rounds, block, settings.warmUpCalls, log)
    for (const r of h.rows) log(`  ${r.label}: median ${round(r.medianMs)} ms, p90 ${round(r.p90Ms)} ms`)
    heaps.push(h)
  }
  return { date, loadAverage: { start, end: round(loadavg()[0]!) }, sizes: heaps }
}

/** (k) issue #52: a call in a warm box at most half of `docker exec` through the CLI, at most 3× the local executor. */
const judgeContainer = (item: ContainerCalls): Array<Target> => {
  if ("missing" in item) return []
  const row = (id: string) => item.rows.find((r) => r.id === id)
  const ours = row("container")
  const cli = row("docker-cli")
  const local = row("local")
  if (ours === undefined || cli === undefined || local === undefined) return []
  return [
    ratioTarget("k", "DockerBashExecutor / `docker exec` through the CLI, wall time per call of `true` in a warm box", ours.medianMs / cli.medianMs, 0.5),
    ratioTarget("k", "DockerBashExecutor / LocalBashExecutor, wall time per call of `true`", ours.medianMs / local.medianMs, 3)
  ]
}

/**
 * How far a ratio of two (l) rows moves from round to round: the quartiles of the per-round ratios
 * (a round runs a block of every contender, within a second or so, so a busier moment weighs on all). A ratio whose
 * quartiles straddle 1 is within the run's own noise.
 */
const roundSpread = (mine: CallRow, theirs: CallRow): string => {
  const a = mine.roundMediansMs ?? []
  const b = theirs.roundMediansMs ?? []
  if (a.length < 4 || a.length !== b.length) return ""
  const ratios = a.map((ms, i) => ms / b[i]!)
  return `; per round ${round(percentile(ratios, 25))}–${round(percentile(ratios, 75))}× (quartiles of ${ratios.length})`
}

/**
 * Issue 25's target: our executor no slower per call than the reference, at each heap size; and
 * issue 55's: our `bash` tool no slower than the reference tool at each heap size.
 */
const judgeHeap = (item: HeapItem): Array<Target> =>
  item.sizes.flatMap((h) => {
    const row = (id: string) => h.rows.find((r) => r.id === id)
    const ours = row("ours")!
    const direct = row("ours-direct")!
    const reference = row("reference")
    const oursTool = row("ours-tool")
    const referenceTool = row("reference-tool")
    const where = `host heap ${h.retainedMiB} MiB kept (heapUsed ${h.heapUsedMiB} MiB)`
    return [
      ...(reference === undefined
        ? []
        : [ratioTarget("l", `effect-bash executor / reference executor, wall time per call, ${where}${roundSpread(ours, reference)}`, ours.medianMs / reference.medianMs, 1)]),
      ...(oursTool === undefined || referenceTool === undefined
        ? []
        : [ratioTarget("l", `effect-bash \`bash\` tool / reference tool (registry), wall time per call, ${where}${roundSpread(oursTool, referenceTool)}`, oursTool.medianMs / referenceTool.medianMs, 1)]),
      // Not a target of the issue: what posix_spawn saves over a fork of the host.
      ratioTarget(
        "l",
        `effect-bash executor, posix_spawn / directSpawn, wall time per call, ${where} (information, not a target of the issue)`,
        ours.medianMs / direct.medianMs,
        1
      )
    ]
  })

const runColdStart = async (): Promise<ColdStart> => {
  const { coldStartRounds: rounds, coldStartRssRounds: rssRounds } = settings
  log(`(j) cold start: fresh node processes × ${rounds} (peak RSS and CPU time × ${rssRounds})`)
  const start = round(loadavg()[0]!)
  const rows = await measureColdStart(rounds, rssRounds, log)
  for (const row of rows) log(`  ${row.id}: ${row.medianMs} ms (${row.ratio}×), CPU ${row.cpuMs} ms (${row.cpuRatio}×), ${row.peakRssMiB} MiB`)
  return { date: new Date().toISOString(), loadAverage: { start, end: round(loadavg()[0]!) }, rounds, rssRounds, rows }
}

/** Issue 26's targets: the command against `import("effect")`, which any Effect app pays. */
const judgeColdStart = (c: ColdStart): Array<Target> => {
  const row = (id: string) => c.rows.find((r) => r.id === id)!
  const targets: Array<Target> = []
  for (const [id, what] of [["run", "`effect-bash run -- true`"], ["mcp", "`effect-bash mcp` answering `initialize`"]] as const) {
    targets.push(
      ratioTarget("j", `${what}, wall time / \`import("effect")\``, row(id).ratio, 0.5),
      judge("j", `${what}, peak RSS`, row(id).peakRssMiB, "<=", 90, "MiB")
    )
  }
  targets.push(ratioTarget("j", "`import(\"effect-bash\")`, wall time / `import(\"effect\")`", row("import effect-bash").ratio, 1.3))
  // Not a target of the issue: CPU time, which other work on a busy machine skews less than wall time.
  targets.push(
    ratioTarget(
      "j",
      "`effect-bash run -- true`, CPU time / `import(\"effect\")` (information, not a target of the issue)",
      row("run").cpuRatio,
      0.5
    )
  )
  return targets
}

/**
 * With `--write`, one item run alone is merged into `bench/results.json` (its fields and targets
 * replacing the item's) and `bench/results.md` is rendered again.
 */
const writeItem = async (item: string, fields: Partial<BenchResults>, targets: ReadonlyArray<Target>) => {
  if (!process.argv.includes("--write")) return
  const benchDir = join(fileURLToPath(new URL(".", import.meta.url)), "..", "..", "bench")
  const previous = JSON.parse(await readFile(join(benchDir, "results.json"), "utf8")) as BenchResults
  const results: BenchResults = {
    ...previous,
    ...fields,
    targets: [...previous.targets.filter((t) => t.id !== item), ...targets]
  }
  await writeFile(join(benchDir, "results.json"), JSON.stringify(results, null, 2) + "\n")
  await writeFile(join(benchDir, "results.md"), renderMarkdown(results))
  log(`wrote item (${item}) to ${join(benchDir, "results.json")} and results.md`)
}

/** `--only=cold-start`: item (j) alone, printed with its targets; `--write` merges it into the results. */
const mainColdStart = async () => {
  const coldStart = await runColdStart()
  const targets = judgeColdStart(coldStart)
  process.stdout.write(`${renderColdStart(coldStart)}\n\n${renderTargets(targets)}\n`)
  await writeItem("j", { coldStart }, targets)
}

/** `--only=container`: item (k) alone, printed with its targets; `--write` merges it into the results. */
const mainContainer = async () => {
  const container = await runContainer()
  const targets = judgeContainer(container)
  process.stdout.write([renderContainer(container), renderTargets(targets)].join("\n\n") + "\n")
  await writeItem("k", { container }, targets)
}

/** `--only=heap`: item (l) alone, printed with its targets; `--write` merges it into the results. */
const mainHeap = async () => {
  const heap = await runHeap()
  const targets = judgeHeap(heap)
  process.stdout.write([renderHeap(heap), renderTargets(targets)].join("\n\n") + "\n")
  await writeItem("l", { heap }, targets)
}

const runNetwork = async (): Promise<NetworkItem> => {
  const { networkCount: count, networkRounds: rounds } = settings
  log(`(m) a proxied curl of 1 KiB: ${rounds} × ${count} sequential calls per contender, interleaved`)
  const date = new Date().toISOString()
  const start = round(loadavg()[0]!)
  const m = await measureNetwork(count, rounds)
  if (m.containerMissing !== undefined) log(`  containers skipped: ${m.containerMissing}`)
  for (const r of m.rows) log(`  ${r.label}: ${r.msPerCall} ms/call (${r.addedMs >= 0 ? "+" : ""}${r.addedMs} ms over ${r.baseline})`)
  return { date, loadAverage: { start, end: round(loadavg()[0]!) }, ...m }
}

/** `--only=network`: item (m) alone, printed; `--write` merges it into the results. */
const mainNetwork = async () => {
  const network = await runNetwork()
  process.stdout.write(renderNetwork(network) + "\n")
  await writeItem("m", { network }, [])
}

/** `--only=terminals`: item (n) alone, printed, nothing written. */
const mainTerminals = async () => {
  const [sends, rounds] = quick ? [5, 1] : [20, 5]
  log(`(n) terminals: ${rounds} rounds of an open, ${sends} sends of \`echo hi\` and a close per contender, interleaved`)
  const start = round(loadavg()[0]!)
  const { rows, referenceMissing } = await measureTerminals(sends, rounds, log)
  const ratio = (pick: (row: (typeof rows)[number]) => number, row: (typeof rows)[number]) => {
    const reference = rows.find((other) => other.id === "reference")
    return reference === undefined ? "" : `${round(pick(row) / pick(reference), 2)}×`
  }
  process.stdout.write([
    `load average ${start} → ${round(loadavg()[0]!)}`,
    "| contender | \`echo hi\` round trip, median | p90 | host CPU per send | ratio | open | ratio | close |",
    "|---|---:|---:|---:|---:|---:|---:|---:|",
    ...rows.map((row) =>
      `| ${row.label} | ${row.sendMs} ms | ${row.sendP90Ms} ms | ${row.sendCpuMs} ms | ${ratio((r) => r.sendMs, row)} | ${row.openMs} ms | ${
        ratio((r) => r.openMs, row)
      } | ${row.closeMs} ms |`
    ),
    ...(referenceMissing === undefined ? [] : ["", `Reference left out: ${referenceMissing}.`])
  ].join("\n") + "\n")
}

const main = async () => {
  if (onlyTerminals) return mainTerminals()
  if (onlyNetwork) return mainNetwork()
  if (onlyColdStart) return mainColdStart()
  if (onlyContainer) return mainContainer()
  if (onlyHeap) return mainHeap()
  if (onlyModelText) return mainModelText()
  if (onlyPerCall) return mainPerCall()
  if (onlyThroughput) return mainThroughput()
  if (process.argv.includes("--modes-only")) {
    process.stdout.write(renderModes(await runModes()) + "\n")
    return
  }
  const started = performance.now()
  const loadAtStart = loadavg()[0]!
  const dir = await mkdtemp(join(tmpdir(), "effect-bash-bench-"))
  const { runners, notes, close } = await makeRunners({ maxSpillBytes: settings.oursMaxSpillBytes })
  let comparisons: Array<Comparison>
  let phases: Array<Phases> | undefined
  try {
    ;({ comparisons, phases } = await runComparisons(runners, dir, notes))
  } finally {
    await close()
    await rm(dir, { recursive: true, force: true })
  }
  const perCall = perCallRows(runners, [comparisons[0]!, comparisons[1]!, comparisons[2]!])
  const rss = await runRss()
  const settle = await runSettle()
  const modelText = runModelText()
  const modes = await runModes()
  const container = await runContainer()
  const heap = await runHeap()
  const coldStart = await runColdStart()
  const network = await runNetwork()
  const results: BenchResults = {
    machine: describeMachine(),
    loadAverage: { start: round(loadAtStart), end: round(loadavg()[0]!) },
    date: new Date().toISOString(),
    durationSeconds: round((performance.now() - started) / 1000, 1),
    settings,
    labels: Object.fromEntries(runners.map((r) => [r.id, r.label])),
    notes,
    comparisons,
    perCall,
    ...(phases === undefined ? {} : { phases }),
    rss,
    settle,
    modelText,
    modes,
    container,
    heap,
    coldStart,
    network,
    targets: [
      ...judgeAll(comparisons, perCall, rss, settle),
      ...judgeModelText(modelText),
      ...judgeHeap(heap),
      ...judgeContainer(container),
      ...judgeColdStart(coldStart)
    ]
  }
  const markdown = renderMarkdown(results)
  process.stdout.write(markdown)
  if (quick) return
  const here = fileURLToPath(new URL(".", import.meta.url))
  // dist/bench/run.js → bench/
  const benchDir = join(here, "..", "..", "bench")
  const m = results.machine
  const caption = `${m.cpuCount}× ${m.cpuModel}, node ${m.node}, ${results.date.slice(0, 10)}, load average ${results.loadAverage.start} → ${results.loadAverage.end}`
  await writeFile(join(benchDir, "results.json"), JSON.stringify(results, null, 2) + "\n")
  await writeFile(join(benchDir, "results.md"), markdown)
  await writeFile(join(benchDir, "results.svg"), renderPerCallSvg(perCall, caption))
  log(`wrote ${join(benchDir, "results.json")}, results.md and results.svg`)
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? error.stack : String(error)}\n`)
  process.exitCode = 1
})
