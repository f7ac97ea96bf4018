/**
 * Work item (d), run in a fresh node process per measurement:
 * `node --expose-gc dist/bench/rss-child.js <ours|raw> <outputBytes> <maxSpillBytes>`.
 *
 * Streams `<outputBytes>` of output through our executor (or, for reference, through raw
 * child_process into a file) and prints one JSON line (an `RssReport`) with the peak resident set
 * size over a baseline taken after a warm-up call.
 */
import { mkdtemp, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { performance } from "node:perf_hooks"
import type { RssReport } from "./lib/results.js"
import { makeOursRunner } from "./runners/ours.js"
import { rawRunToFile } from "./runners/raw.js"

const SAMPLE_EVERY_MS = 2

const maxRss = () => process.resourceUsage().maxRSS * 1024

interface Outcome {
  readonly spilled: boolean
  readonly exitCode: number | null
}

/** One way to push `command`'s output through this process, plus its cleanup. */
interface Contender {
  readonly run: (command: string) => Promise<Outcome>
  readonly close: () => Promise<void>
}

const contender = async (name: string, maxSpillBytes: number): Promise<Contender> => {
  if (name === "ours") {
    const ours = await makeOursRunner({ maxSpillBytes })
    return {
      run: async (command) => {
        const result = await ours.execute({ command })
        return { spilled: result.stdout.spillPath !== undefined, exitCode: result.exitCode }
      },
      close: ours.close
    }
  }
  const dir = await mkdtemp(join(tmpdir(), "effect-bash-bench-rss-"))
  return {
    run: async (command) => {
      const file = await rawRunToFile(command, dir)
      await rm(file.path)
      return { spilled: true, exitCode: 0 }
    },
    close: () => rm(dir, { recursive: true, force: true })
  }
}

const main = async () => {
  const [name = "", outputArg = "", spillArg = ""] = process.argv.slice(2)
  const outputBytes = Number(outputArg)
  const maxSpillBytes = Number(spillArg)
  if ((name !== "ours" && name !== "raw") || !(outputBytes > 0) || !(maxSpillBytes >= 0)) {
    throw new Error("usage: rss-child <ours|raw> <outputBytes> <maxSpillBytes>")
  }
  const subject = await contender(name, maxSpillBytes)
  // Warm every path the measured call takes (spawn, tail, spill) before the baseline.
  await subject.run("head -c 1048576 /dev/zero")
  globalThis.gc?.()
  await new Promise((resolve) => setTimeout(resolve, 50))
  globalThis.gc?.()
  const baselineRss = process.memoryUsage.rss()
  const maxRssBefore = maxRss()

  let sampledPeakRss = baselineRss
  const sampler = setInterval(() => {
    sampledPeakRss = Math.max(sampledPeakRss, process.memoryUsage.rss())
  }, SAMPLE_EVERY_MS)
  const start = performance.now()
  const outcome = await subject.run(`head -c ${outputBytes} /dev/zero`)
  const elapsedMs = performance.now() - start
  clearInterval(sampler)
  sampledPeakRss = Math.max(sampledPeakRss, process.memoryUsage.rss())
  const maxRssAfter = maxRss()
  await subject.close()

  const peak = maxRssAfter > maxRssBefore ? Math.max(sampledPeakRss, maxRssAfter) : sampledPeakRss
  const report: RssReport = {
    contender: name,
    outputBytes,
    maxSpillBytes,
    baselineRss,
    sampledPeakRss,
    maxRssBefore,
    maxRssAfter,
    growth: peak - baselineRss,
    elapsedMs,
    ...outcome
  }
  process.stdout.write(JSON.stringify(report) + "\n")
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? error.stack : String(error)}\n`)
  process.exitCode = 1
})
