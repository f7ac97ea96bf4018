/**
 * Renders a run's results as the Markdown tables printed to stdout and saved to `bench/results.md`.
 */
import type { BenchResults, Comparison } from "./results.js"
import { MiB, round } from "./stats.js"

const table = (header: ReadonlyArray<string>, rows: ReadonlyArray<ReadonlyArray<string>>): string =>
  [header, header.map(() => "---"), ...rows].map((cells) => `| ${cells.join(" | ")} |`).join("\n")

const fmt = (value: number, unit: string) => `${round(value, value >= 100 ? 0 : 1)} ${unit}`

const comparisonRow = (c: Comparison, ids: ReadonlyArray<string>): Array<string> => [
  c.title,
  ...ids.map((id) => {
    const stat = c.contenders[id]
    if (stat === undefined) return "—"
    return id === "raw" ? fmt(stat.median, c.unit) : `${fmt(stat.median, c.unit)} (${round(stat.ratioToRaw)}×)`
  })
]

const relationText = { "<=": "≤", ">=": "≥", "<": "<" } as const

/** The whole report: contenders side by side, then RSS, settle times and the targets. */
export const renderMarkdown = (r: BenchResults): string => {
  const ids = Object.keys(r.labels)
  const m = r.machine
  const sections = [
    `Machine: ${m.cpuCount}× ${m.cpuModel}, ${m.totalMemoryMiB} MiB RAM, ${m.os}, node ${m.node}; ${r.date}; ` +
      `run took ${round(r.durationSeconds, 0)} s. Medians; ratios are to raw child_process.`,
    table(
      ["Work", ...ids.map((id) => r.labels[id]!)],
      r.comparisons.map((c) => comparisonRow(c, ids))
    ),
    table(
      ["Output through effect-bash", "maxSpillBytes", "peak RSS growth", "time", "spill file kept"],
      r.rss.map((x) => [
        fmt(x.outputBytes / MiB, "MiB"),
        fmt(x.maxSpillBytes / MiB, "MiB"),
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
