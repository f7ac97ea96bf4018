/**
 * Renders a run's results as the Markdown tables printed to stdout and saved to `bench/results.md`.
 */
import type { BenchResults, Comparison, ContenderStat, ModeCost, PerCall, RssReport } from "./results.js"
import { MiB, round } from "./stats.js"

const table = (header: ReadonlyArray<string>, rows: ReadonlyArray<ReadonlyArray<string>>): string =>
  [header, header.map(() => "---"), ...rows].map((cells) => `| ${cells.join(" | ")} |`).join("\n")

const fmt = (value: number, unit: string) => `${round(value, value >= 100 ? 0 : 1)} ${unit}`

const perContender = (
  c: Comparison,
  ids: ReadonlyArray<string>,
  cell: (stat: ContenderStat, isRaw: boolean) => string
): Array<string> => [c.title, ...ids.map((id) => (c.contenders[id] === undefined ? "—" : cell(c.contenders[id], id === "raw")))]

const relationText = { "<=": "≤", ">=": "≥", "<": "<" } as const

const rssSubject = (x: RssReport) =>
  x.contender === "raw" ? "raw child_process → file" : `effect-bash, maxSpillBytes ${fmt(x.maxSpillBytes / MiB, "MiB")}`

/** (g) The per-call cost of each sandbox mode and of containment. */
export const renderModes = (modes: ReadonlyArray<ModeCost>): string =>
  table(
    ["Per call of `true` (median, sequential)", "wall time per call", "added to LocalBashExecutor"],
    modes.map((mode) => [mode.label, fmt(mode.msPerCall, "ms"), mode.id === "local" ? "—" : `${mode.addedMs >= 0 ? "+" : ""}${fmt(mode.addedMs, "ms")}`])
  )

/** (h) Host CPU and JS allocation per sequential call of `true`. */
export const renderPerCall = (perCall: ReadonlyArray<PerCall>, labels: Readonly<Record<string, string>>): string =>
  table(
    ["Per call of `true` (sequential, medians)", "CPU of the node process", "JS heap allocated"],
    perCall.map((p) => [
      labels[p.id] ?? p.id,
      p.id === "raw" ? fmt(p.cpuMs, "ms") : `${fmt(p.cpuMs, "ms")} (${round(p.cpuRatioToRaw)}×)`,
      p.id === "raw" ? fmt(p.allocatedKiB, "KiB") : `${fmt(p.allocatedKiB, "KiB")} (${round(p.allocatedRatioToRaw, 1)}×)`
    ])
  )

/** The whole report: contenders side by side, then RSS, settle times and the targets. */
export const renderMarkdown = (r: BenchResults): string => {
  const ids = Object.keys(r.labels)
  const labels = ids.map((id) => r.labels[id]!)
  const m = r.machine
  const sections = [
    `Machine: ${m.cpuCount}× ${m.cpuModel}, ${m.totalMemoryMiB} MiB RAM, ${m.os}, node ${m.node}; ${r.date}; ` +
      `load average ${r.loadAverage.start} → ${r.loadAverage.end}; run took ${round(r.durationSeconds, 0)} s. ` +
      `Medians; ratios are to raw child_process.`,
    table(
      ["Work (wall time or throughput)", ...labels],
      r.comparisons.map((c) =>
        perContender(c, ids, (s, isRaw) => (isRaw ? fmt(s.median, c.unit) : `${fmt(s.median, c.unit)} (${round(s.ratioToRaw)}×)`))
      )
    ),
    table(
      ["Work (CPU time of the node process)", ...labels],
      r.comparisons.map((c) =>
        perContender(c, ids, (s, isRaw) => (isRaw ? fmt(s.cpuMs, "ms") : `${fmt(s.cpuMs, "ms")} (${round(s.cpuRatioToRaw)}×)`))
      )
    ),
    ...(r.perCall === undefined ? [] : [renderPerCall(r.perCall, r.labels)]),
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
    table(
      ["Model-text cleaning (ANSI, `\\r`)", "size", "time (median)"],
      r.modelText.map((t) => [t.input, `${t.kib} KiB`, fmt(t.medianMs, "ms")])
    ),
    table(
      ["Target", "measured", "target", "result"],
      r.targets.map((t) => [
        `(${t.id}) ${t.description}`,
        `${round(t.measured)} ${t.unit}`,
        `${relationText[t.relation]} ${round(t.limit)} ${t.unit}`,
        t.pass ? "PASS" : "**MISS**"
      ])
    )
  ]
  return sections.join("\n\n") + "\n"
}
