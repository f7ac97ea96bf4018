/**
 * Work item (j): cold start. Each contender is a fresh `node` process, the contenders take turns in
 * every round: `import("effect")` alone (the barrel any Effect app loads), a bare `node -e 0` (what
 * every start costs before it loads anything, the machine's environment included), the bundled
 * `effect-bash run -- true`, `effect-bash mcp` until it answers `initialize`, and an import of each
 * library entry point. Wall time is taken without instrumentation; peak RSS and CPU time in separate
 * runs of the same commands whose node reports its own `maxRSS` and CPU time as it exits (CPU time
 * is less sensitive than wall time to other work on the machine).
 */
import { spawn } from "node:child_process"
import { mkdtemp, readFile, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { performance } from "node:perf_hooks"
import { fileURLToPath } from "node:url"
import { median, round } from "../lib/stats.js"

/** The repository (dist/bench/sections → ../../..): `effect` and `effect-bash` resolve from here. */
const root = fileURLToPath(new URL("../../../", import.meta.url))
const bin = join(root, "dist", "bin", "effect-bash.js")

/** One way of starting node; `answer`, when set, ends the measurement at the first stdout line it accepts. */
interface Contender {
  readonly id: string
  readonly label: string
  readonly args: ReadonlyArray<string>
  readonly stdin?: string
  readonly answered?: (line: string) => boolean
}

const importOf = (specifier: string): Contender => ({
  id: `import ${specifier}`,
  label: `\`import("${specifier}")\``,
  args: ["-e", `import(${JSON.stringify(specifier)})`]
})

const initialize = JSON.stringify({
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "bench", version: "0" } }
})

/** `import("effect")` first: every ratio is to it. */
export const coldStartContenders: ReadonlyArray<Contender> = [
  importOf("effect"),
  { id: "node", label: "`node -e 0` (a bare start, part of every row)", args: ["-e", "0"] },
  { id: "run", label: "`effect-bash run -- true`", args: [bin, "run", "--", "true"] },
  {
    id: "mcp",
    label: "`effect-bash mcp` until it answers `initialize`",
    args: [bin, "mcp"],
    stdin: `${initialize}\n`,
    answered: (line) => line.includes("\"id\":1") && line.includes("\"result\"")
  },
  ...["effect-bash", "effect-bash/ai", "effect-bash/docker", "effect-bash/testing", "effect-bash/cordis"].map(importOf)
]

// Writes the process's peak RSS (bytes) and CPU time (µs) to the file named by the environment as it exits.
const reportUsage = `import { writeFileSync } from "node:fs"
process.on("exit", () => {
  const usage = process.resourceUsage()
  writeFileSync(process.env.EFFECT_BASH_BENCH_USAGE_FILE, JSON.stringify({ rss: usage.maxRSS * 1024, cpu: usage.userCPUTime + usage.systemCPUTime }))
})`

const limitMs = 60_000

/** Starts `contender`; resolves with the wall time until it answered (or exited), once it exited. */
const runOnce = (contender: Contender, usageFile?: string): Promise<number> =>
  new Promise((resolve, reject) => {
    const args = usageFile === undefined
      ? contender.args
      : ["--import", `data:text/javascript,${encodeURIComponent(reportUsage)}`, ...contender.args]
    const started = performance.now()
    const child = spawn(process.execPath, args, {
      cwd: root,
      env: { ...process.env, ...(usageFile === undefined ? {} : { EFFECT_BASH_BENCH_USAGE_FILE: usageFile }) },
      stdio: ["pipe", "pipe", "pipe"]
    })
    let answeredAt: number | undefined
    let stdout = ""
    let stderr = ""
    const limit = setTimeout(() => child.kill("SIGKILL"), limitMs)
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
      stdout += chunk
      if (answeredAt === undefined && contender.answered !== undefined && stdout.split("\n").some(contender.answered)) {
        answeredAt = performance.now()
        child.stdin.end()
      }
    })
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk))
    child.stdin.on("error", () => undefined)
    if (contender.stdin === undefined) child.stdin.end()
    else child.stdin.write(contender.stdin)
    child.once("error", reject)
    child.once("close", (code, signal) => {
      clearTimeout(limit)
      const ended = performance.now()
      if (code !== 0 || (contender.answered !== undefined && answeredAt === undefined)) {
        reject(new Error(`${contender.id}: exit ${code ?? signal}${contender.answered === undefined ? "" : ", no answer"}\n${stdout}${stderr}`))
      } else {
        resolve((answeredAt ?? ended) - started)
      }
    })
  })

/** One contender's medians over the rounds. */
export interface ColdStartRow {
  readonly id: string
  readonly label: string
  readonly medianMs: number
  readonly samplesMs: ReadonlyArray<number>
  /** `medianMs` over `import("effect")`'s. */
  readonly ratio: number
  readonly peakRssMiB: number
  /** Median CPU time (user + system) of the node process, children excluded. */
  readonly cpuMs: number
  /** `cpuMs` over `import("effect")`'s. */
  readonly cpuRatio: number
}

/**
 * `rounds` rounds of wall time and `rssRounds` of peak RSS and CPU time; in each round every contender
 * runs once, in the same order.
 */
export const measureColdStart = async (
  rounds: number,
  rssRounds: number,
  log: (line: string) => void
): Promise<ReadonlyArray<ColdStartRow>> => {
  const times = new Map(coldStartContenders.map((c) => [c.id, [] as Array<number>]))
  const rss = new Map(coldStartContenders.map((c) => [c.id, [] as Array<number>]))
  const cpu = new Map(coldStartContenders.map((c) => [c.id, [] as Array<number>]))
  const dir = await mkdtemp(join(tmpdir(), "effect-bash-bench-cold-"))
  try {
    for (let pass = 0; pass < Math.max(rounds, rssRounds); pass++) {
      for (const contender of coldStartContenders) {
        if (pass < rounds) times.get(contender.id)!.push(await runOnce(contender))
        if (pass < rssRounds) {
          const file = join(dir, "usage.json")
          await runOnce(contender, file)
          const usage = JSON.parse(await readFile(file, "utf8")) as { readonly rss: number; readonly cpu: number }
          rss.get(contender.id)!.push(usage.rss)
          cpu.get(contender.id)!.push(usage.cpu / 1000)
        }
      }
      log(`  round ${pass + 1}: ${coldStartContenders.map((c) => `${c.id} ${pass < rounds ? round(times.get(c.id)!.at(-1)!, 0) : "-"} ms`).join(", ")}`)
    }
  } finally {
    await rm(dir, { recursive: true, force: true })
  }
  const base = median(times.get(coldStartContenders[0]!.id)!)
  const baseCpu = median(cpu.get(coldStartContenders[0]!.id)!)
  return coldStartContenders.map((c) => {
    const m = median(times.get(c.id)!)
    return {
      id: c.id,
      label: c.label,
      medianMs: round(m, 1),
      samplesMs: times.get(c.id)!.map((t) => round(t, 1)),
      ratio: round(m / base, 3),
      peakRssMiB: round(median(rss.get(c.id)!) / (1024 * 1024), 1),
      cpuMs: round(median(cpu.get(c.id)!), 0),
      cpuRatio: round(median(cpu.get(c.id)!) / baseCpu, 3)
    }
  })
}
