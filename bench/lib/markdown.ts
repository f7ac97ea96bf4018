/**
 * Renders a run's results as the Markdown tables printed to stdout and saved to `bench/results.md`.
 */
import type { Phases } from "../sections/phases.js"
import type {
  BenchResults,
  ColdStart,
  CallRow,
  Comparison,
  ContainerCalls,
  NetworkItem,
  ContenderStat,
  HeapItem,
  ItemRun,
  ModeCost,
  PerCall,
  RssReport,
  Target
} from "./results.js"
import { MiB, round } from "./stats.js"

const table = (header: ReadonlyArray<string>, rows: ReadonlyArray<ReadonlyArray<string>>): string =>
  [header, header.map(() => "---"), ...rows].map((cells) => `| ${cells.join(" | ")} |`).join("\n")

const fmt = (value: number, unit: string) => `${round(value, value >= 100 ? 0 : value >= 10 ? 1 : 2)} ${unit}`

const relationText = { "<=": "≤", ">=": "≥", "<": "<" } as const

const rssSubject = (x: RssReport) =>
  x.contender === "raw" ? "raw child_process → file" : `effect-bash, maxSpillBytes ${fmt(x.maxSpillBytes / MiB, "MiB")}`

/** (g) The per-call cost of each sandbox mode and of containment. */
export const renderModes = (modes: ReadonlyArray<ModeCost>): string =>
  table(
    ["Per call of `true` (median, sequential)", "wall time per call", "added to LocalBashExecutor"],
    modes.map((mode) => [mode.label, fmt(mode.msPerCall, "ms"), mode.id === "local" ? "—" : `${mode.addedMs >= 0 ? "+" : ""}${fmt(mode.addedMs, "ms")}`])
  )

const levelText = { process: "spawn", executor: "executor", tool: "tool, registry" } as const

const withRatio = (value: number, raw: number, unit: string, isRaw: boolean) =>
  isRaw ? fmt(value, unit) : `${fmt(value, unit)} (${round(value / raw)}×)`

/**
 * (a)/(b)/(h) Wall time, host CPU and JS allocation per call of `true`, each contender a row; ratios to
 * raw.
 */
export const renderPerCall = (perCall: ReadonlyArray<PerCall>): string => {
  const raw = perCall.find((p) => p.id === "raw")!
  return table(
    [
      "Per call of `true` (medians; × raw)",
      "level",
      "sequential: wall",
      "sequential: CPU",
      "8 concurrent: wall",
      "8 concurrent: CPU",
      "20 ms apart: wall",
      "JS heap allocated"
    ],
    perCall.map((p) => {
      const isRaw = p.id === "raw"
      return [
        p.label,
        levelText[p.level],
        withRatio(p.sequential.wallMs, raw.sequential.wallMs, "ms", isRaw),
        withRatio(p.sequential.cpuMs, raw.sequential.cpuMs, "ms", isRaw),
        withRatio(p.concurrent.wallMs, raw.concurrent.wallMs, "ms", isRaw),
        withRatio(p.concurrent.cpuMs, raw.concurrent.cpuMs, "ms", isRaw),
        withRatio(p.paced.wallMs, raw.paced.wallMs, "ms", isRaw),
        withRatio(p.sequential.allocatedKiB, raw.sequential.allocatedKiB, "KiB", isRaw)
      ]
    })
  )
}

/** (i) Each contender's call split at the moment its command ran. */
export const renderPhases = (phases: ReadonlyArray<Phases>): string =>
  table(
    ["(i) Per call of a one-line command (medians)", "until the command runs", "after it ran", "whole call"],
    phases.map((p) => [p.label, fmt(p.untilCommandMs, "ms"), fmt(p.afterCommandMs, "ms"), fmt(p.wholeCallMs, "ms")])
  )

const ratioText = (row: CallRow, to: CallRow | undefined) =>
  to === undefined || row === to ? "—" : `${round(row.medianMs / to.medianMs)}×`

const whenText = (run: ItemRun) => `${run.date}, load average ${run.loadAverage.start} → ${run.loadAverage.end}`

/** (k) A call in a warm container, through our executor and the docker CLI, and on the host. */
export const renderContainer = (k: ContainerCalls): string => {
  if ("missing" in k) return `(k) A call in a warm container, ${whenText(k)}: skipped, ${k.missing}.`
  const row = (id: string) => k.rows.find((r) => r.id === id)
  return `(k) A call in a warm container, ${whenText(k)}.\n\n` + table(
    [`(k) Per call of \`true\` in a warm container (${k.image}), interleaved`, "median", "p90", "× docker exec (CLI)", "× local executor"],
    k.rows.map((r) => [
      r.label,
      fmt(r.medianMs, "ms"),
      fmt(r.p90Ms, "ms"),
      // Each engine's executor against its own engine's CLI.
      ratioText(r, row(r.id.endsWith("-remote") ? "docker-cli-remote" : "docker-cli")),
      ratioText(r, row("local"))
    ])
  )
}

/** (m) A proxied `curl` of 1 KiB, against the same executor without the allow-list. */
export const renderNetwork = (m: NetworkItem): string => {
  const labelOf = (id: string) => m.rows.find((r) => r.id === id)?.label ?? id
  return `(m) A proxied \`curl\` of 1 KiB from a server on this machine, ${whenText(m)}: ${m.rounds} × ${m.count} ` +
    `sequential calls per contender, interleaved${m.containerMissing === undefined ? "" : `; containers skipped, ${m.containerMissing}`}.\n\n` +
    table(
      ["(m) Contender", "ms per call", "added", "against"],
      m.rows.map((r) => [r.label, fmt(r.msPerCall, "ms"), r.id === r.baseline ? "—" : fmt(r.addedMs, "ms"), r.id === r.baseline ? "—" : labelOf(r.baseline)])
    )
}

/** (l) posix_spawn, direct spawn and the reference, per host heap size: one column per size. */
export const renderHeap = (item: HeapItem): string => {
  const heaps = item.sizes
  const ids = [...new Set(heaps.flatMap((h) => h.rows.map((r) => r.id)))]
  return `(l) posix_spawn, direct spawn, the reference and both \`bash\` tools by host heap size, ${whenText(item)}.\n\n` + table(
    [
      "(l) Per call of `true` (median, p90; × the reference executor, a tool × the reference tool)",
      ...heaps.map((h) => `host heap ${h.retainedMiB} MiB kept (heapUsed ${h.heapUsedMiB} MiB, RSS ${h.rssMiB} MiB)`)
    ],
    ids.map((id) => [
      heaps.flatMap((h) => h.rows).find((r) => r.id === id)!.label,
      ...heaps.map((h) => {
        const r = h.rows.find((x) => x.id === id)
        if (r === undefined) return "—"
        // A tool against the reference tool, an executor against the reference executor.
        const referenceId = id.endsWith("-tool") ? "reference-tool" : "reference"
        const reference = h.rows.find((x) => x.id === referenceId)
        const ratio = reference === undefined || id === referenceId ? "" : ` (${ratioText(r, reference)})`
        return `${fmt(r.medianMs, "ms")}${ratio}, p90 ${fmt(r.p90Ms, "ms")}`
      })
    ])
  )
}

/** (j) Each fresh process's wall time and peak RSS; ratios to `import("effect")`. */
export const renderColdStart = (c: ColdStart): string =>
  `(j) Cold start, ${c.date}, load average ${c.loadAverage.start} → ${c.loadAverage.end}: medians of ${c.rounds} ` +
  `interleaved rounds (peak RSS and CPU time: of ${c.rssRounds}); CPU time is the node process's, children excluded.\n\n` +
  table(
    ["(j) A fresh node process", "wall time", "× `import(\"effect\")`", "CPU time", "× `import(\"effect\")`", "peak RSS"],
    c.rows.map((row) => [
      row.label,
      fmt(row.medianMs, "ms"),
      `${round(row.ratio)}×`,
      fmt(row.cpuMs, "ms"),
      `${round(row.cpuRatio)}×`,
      fmt(row.peakRssMiB, "MiB")
    ])
  )

// A measurement that rounds to its limit is shown with the digits that decide the result.
const measuredText = (t: Target): number => {
  let digits = 2
  while (digits < 6 && t.measured !== t.limit && round(t.measured, digits) === round(t.limit, digits)) digits++
  return round(t.measured, digits)
}

/** The targets, judged. */
export const renderTargets = (targets: ReadonlyArray<Target>): string =>
  table(
    ["Target", "measured", "target", "result"],
    targets.map((t) => [
      `(${t.id}) ${t.description}`,
      `${measuredText(t)} ${t.unit}`,
      `${relationText[t.relation]} ${round(t.limit)} ${t.unit}`,
      t.pass ? "PASS" : "**MISS**"
    ])
  )

/** The whole report: contenders side by side, then RSS, settle times and the targets. */
export const renderMarkdown = (r: BenchResults): string => {
  const m = r.machine
  /** (c) One table: throughput and host CPU of each contender that writes to a file. */
  const throughput = (c: Comparison) => {
    const ids = Object.keys(c.contenders)
    const row = (what: string, cell: (stat: ContenderStat, isRaw: boolean) => string) =>
      [what, ...ids.map((id) => cell(c.contenders[id]!, id === "raw"))]
    return table([c.title, ...ids.map((id) => r.labels[id] ?? id)], [
      row("throughput", (s, isRaw) => (isRaw ? fmt(s.median, c.unit) : `${fmt(s.median, c.unit)} (${round(s.ratioToRaw)}×)`)),
      row("CPU of the node process", (s, isRaw) => (isRaw ? fmt(s.cpuMs, "ms") : `${fmt(s.cpuMs, "ms")} (${round(s.cpuRatioToRaw)}×)`))
    ])
  }
  const sections = [
    `Machine: ${m.cpuCount}× ${m.cpuModel}, ${m.totalMemoryMiB} MiB RAM, ${m.os}, node ${m.node}; ${r.date}; ` +
      `load average ${r.loadAverage.start} → ${r.loadAverage.end}; run took ${round(r.durationSeconds, 0)} s. ` +
      `Medians; ratios are to raw child_process.`,
    ...r.notes.map((note) => `Note: ${note}`),
    renderPerCall(r.perCall),
    ...(r.phases === undefined ? [] : [renderPhases(r.phases)]),
    ...r.comparisons.filter((c) => c.unit === "MiB/s").map(throughput),
    table(
      ["Output", "through", "peak RSS growth", "time", "whole output on disk"],
      r.rss.map((x) => [
        fmt(x.outputBytes / MiB, "MiB"),
        rssSubject(x),
        fmt(x.growth / MiB, "MiB"),
        fmt(x.elapsedMs, "ms"),
        x.spilled ? "yes" : "no (past maxSpillBytes)"
      ])
    ),
    table(
      ["Settle after timeout", "timeoutMs / graceMs", "effect-bash (median, max)", "raw (median, max)"],
      r.settle.map((s) => [
        `\`${s.command}\``,
        `${s.timeoutMs} / ${s.graceMs}`,
        `${fmt(s.ours.median, "ms")}, ${fmt(s.ours.max, "ms")}`,
        `${fmt(s.raw.median, "ms")}, ${fmt(s.raw.max, "ms")}`
      ])
    ),
    ...(r.modes === undefined ? [] : [renderModes(r.modes)]),
    ...(r.container === undefined ? [] : [renderContainer(r.container)]),
    ...(r.heap === undefined ? [] : [renderHeap(r.heap)]),
    ...(r.network === undefined ? [] : [renderNetwork(r.network)]),
    table(
      ["Model-text cleaning (ANSI, `\\r`)", "size", "time (median)"],
      r.modelText.map((t) => [t.input, `${t.kib} KiB`, fmt(t.medianMs, "ms")])
    ),
    ...(r.coldStart === undefined ? [] : [renderColdStart(r.coldStart)]),
    renderTargets(r.targets)
  ]
  return sections.join("\n\n") + "\n"
}
