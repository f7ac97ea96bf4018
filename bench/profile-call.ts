/**
 * `node --cpu-prof dist/bench/profile-call.js [ours|raw|both] [count]`: a tight loop of sequential
 * `true` calls through one contender, for a CPU profile of the per-call path, with its per-call CPU
 * and allocation printed.
 */
import { makeOursRunner } from "./runners/ours.js"
import { rawRunner } from "./runners/raw.js"
import { perCallCost } from "./sections/perCall.js"

const which = process.argv[2] ?? "both"
const count = Number(process.argv[3] ?? 500)

const main = async () => {
  const ours = await makeOursRunner({})
  const runners = [...(which === "ours" ? [] : [rawRunner]), ...(which === "raw" ? [] : [ours])]
  for (const runner of runners) for (let i = 0; i < 50; i++) await runner.run("true")
  for (const runner of runners) {
    const cost = await perCallCost(count)(runner)
    process.stderr.write(`${runner.id}: ${cost.cpuMs.toFixed(3)} ms CPU, ${(cost.allocatedBytes / 1024).toFixed(1)} KiB allocated per call\n`)
  }
  await ours.close()
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? error.stack : String(error)}\n`)
  process.exitCode = 1
})
