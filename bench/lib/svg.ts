/**
 * `bench/results.svg`: wall time per call of `true` for each contender, sequential, 8-concurrent and
 * sequential 20 ms apart, as a plain SVG bar chart (readable in a browser and on the package page; no
 * dependency).
 */
import type { PerCall } from "./results.js"
import { round } from "./stats.js"

// Markdown backticks in labels are dropped: an image shows them literally.
const escape = (text: string) =>
  text.replace(/`/g, "").replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;")

const series = [
  { key: "sequential", label: "sequential", color: "#4c78a8" },
  { key: "concurrent", label: "8 concurrent", color: "#f58518" },
  { key: "paced", label: "20 ms apart", color: "#54a24b" }
] as const

/** A round step for the axis: 1, 2 or 5 × a power of ten, about `max / 5`. */
const tickStep = (max: number) => {
  const rough = max / 5
  const power = 10 ** Math.floor(Math.log10(rough))
  return [1, 2, 5, 10].map((m) => m * power).find((step) => step >= rough)!
}

/** The chart for one run's per-call rows, with `caption` (machine, date, load) under the title. */
export const renderPerCallSvg = (perCall: ReadonlyArray<PerCall>, caption: string): string => {
  const labelWidth = 300
  const plotWidth = 420
  const valueWidth = 70
  const barHeight = 12
  const rowHeight = series.length * barHeight + 14
  const top = 64
  const width = labelWidth + plotWidth + valueWidth
  const height = top + perCall.length * rowHeight + 58
  const max = Math.max(...perCall.flatMap((p) => series.map((s) => p[s.key].wallMs)))
  const step = tickStep(max)
  const axisMax = Math.ceil(max / step) * step
  const x = (ms: number) => labelWidth + (ms / axisMax) * plotWidth
  const parts: Array<string> = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="system-ui, -apple-system, Segoe UI, sans-serif" font-size="12">`,
    `<rect width="${width}" height="${height}" fill="#ffffff"/>`,
    `<text x="12" y="20" font-size="14" font-weight="bold">Wall time per call of bash -c true, in ms (median; lower is better)</text>`,
    `<text x="12" y="38" fill="#555555">${escape(caption)}</text>`
  ]
  series.forEach((s, i) => {
    const lx = labelWidth + i * 110
    parts.push(
      `<rect x="${lx}" y="46" width="10" height="10" fill="${s.color}"/>`,
      `<text x="${lx + 14}" y="55">${escape(s.label)}</text>`
    )
  })
  for (let tick = 0; tick <= axisMax + 1e-9; tick += step) {
    const tx = x(tick)
    parts.push(
      `<line x1="${tx}" y1="${top - 4}" x2="${tx}" y2="${height - 48}" stroke="#e0e0e0"/>`,
      `<text x="${tx}" y="${height - 34}" text-anchor="middle" fill="#555555">${round(tick, 2)}</text>`
    )
  }
  perCall.forEach((p, row) => {
    const y = top + row * rowHeight
    const ours = p.id.startsWith("ours")
    parts.push(
      `<text x="${labelWidth - 8}" y="${y + barHeight + 4}" text-anchor="end"${ours ? ' font-weight="bold"' : ""}>${escape(p.label)}</text>`
    )
    series.forEach((s, i) => {
      const ms = p[s.key].wallMs
      const by = y + i * barHeight
      parts.push(
        `<rect x="${labelWidth}" y="${by}" width="${round(x(ms) - labelWidth, 1)}" height="${barHeight - 2}" fill="${s.color}"><title>${escape(`${p.label}, ${s.label}: ${round(ms, 2)} ms`)}</title></rect>`,
        `<text x="${round(x(ms) + 4, 1)}" y="${by + barHeight - 3}" font-size="10" fill="#333333">${round(ms, 2)}</text>`
      )
    })
  })
  parts.push(
    `<line x1="${labelWidth}" y1="${top - 4}" x2="${labelWidth}" y2="${height - 48}" stroke="#888888"/>`,
    `<text x="12" y="${height - 12}" font-size="11" fill="#555555">8 concurrent: 8 streams of sequential calls; the round's wall time divided by all its calls. 20 ms apart: the pauses not counted. Tools through a harness registry.</text>`,
    "</svg>"
  )
  return parts.join("\n") + "\n"
}
