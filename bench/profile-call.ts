/**
 * `node --cpu-prof dist/bench/profile-call.js [ours|raw|reference|both|all|ours-tool|reference-tool|tools] [count] [warmUp]`:
 * a tight loop of sequential `true` calls through one contender (`both`: raw and ours; `all`: raw, the
 * reference executor and ours; `tools`: both `bash` tools through a harness registry), for a CPU
 * profile of the per-call path, with its per-call CPU and allocation printed. The reference needs
 * `dsh-subprocess-local` (see `runners/harness.ts`).
 */
import { makeOursToolRunner, makeReferenceRunners } from "./runners/harness.js"
import { makeOursRunner } from "./runners/ours.js"
import { rawRunner } from "./runners/raw.js"
import type { Runner } from "./runners/Runner.js"
import { perCallCost } from "./sections/perCall.js"

const which = process.argv[2] ?? "both"
const count = Number(process.argv[3] ?? 500)
// V8 keeps optimizing our path for about the first 3000 calls: a profile after a short warm-up shows
// its compiler threads, one after a long one the steady state.
const warmUp = Number(process.argv[4] ?? 50)
const log = (line: string) => process.stderr.write(`${line}\n`)
const wants = (...modes: ReadonlyArray<string>) => modes.includes(which)

const main = async () => {
  const ours = wants("ours", "both", "all") ? await makeOursRunner({}) : undefined
  const oursTool = wants("ours-tool", "tools") ? await makeOursToolRunner() : undefined
  const reference = wants("reference", "all", "reference-tool", "tools")
    ? await makeReferenceRunners({}, log)
    : undefined
  const runners: Array<Runner> = [
    ...(wants("raw", "both", "all") ? [rawRunner] : []),
    ...(reference !== undefined && wants("reference", "all") ? [reference.executor] : []),
    ...(reference !== undefined && wants("reference-tool", "tools") ? [reference.tool] : []),
    ...(ours === undefined ? [] : [ours]),
    ...(oursTool === undefined ? [] : [oursTool])
  ]
  for (const runner of runners) for (let i = 0; i < warmUp; i++) await runner.run("true")
  for (const runner of runners) {
    const cost = await perCallCost(count)(runner)
    log(`${runner.id}: ${cost.cpuMs.toFixed(3)} ms CPU, ${(cost.allocatedBytes / 1024).toFixed(1)} KiB allocated per call`)
  }
  await ours?.close()
  await oursTool?.close()
  await reference?.executor.close()
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? error.stack : String(error)}\n`)
  process.exitCode = 1
})
