/**
 * Work item (m): what the sandbox's allow-listed network adds to a `curl` of a small file from a
 * loopback server, against the same sandbox on the host's network and the plain local executor. The
 * allow-list pins its test name to the server (`hosts`), so no resolver is involved.
 */
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import * as LocalBashExecutor from "../../src/layers/LocalBashExecutor.js"
import * as SandboxBashExecutor from "../../src/layers/SandboxBashExecutor.js"
import { median, round, timed } from "../lib/stats.js"
import type { Runner } from "../runners/Runner.js"
import { makeExecutorRunner } from "../runners/ours.js"
import { interleavedRounds } from "./rounds.js"

/** One contender's cost per proxied call. */
export interface NetworkCost {
  readonly id: string
  readonly label: string
  readonly msPerCall: number
  /** Against the sandbox on the host's network. */
  readonly addedMs: number
}

/** Median ms per call of `curl` of a 1 KiB file, over `rounds` × `count` sequential calls. */
export const measureNetwork = async (count: number, rounds: number): Promise<Array<NetworkCost>> => {
  const server = http.createServer((_, response) => response.end("x".repeat(1024)))
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const port = (server.address() as AddressInfo).port
  const curl = (host: string) => `curl -sf -o /dev/null http://${host}:${port}/`
  const commands: Record<string, string> = { local: curl("127.0.0.1"), host: curl("127.0.0.1"), "allow-list": curl("bench.test") }
  const runners: Array<Runner> = [
    await makeExecutorRunner("local", "LocalBashExecutor", LocalBashExecutor.layer()),
    await makeExecutorRunner("host", "SandboxBashExecutor, read-only, network host", SandboxBashExecutor.layer()),
    await makeExecutorRunner(
      "allow-list",
      "SandboxBashExecutor, read-only, network { allow }",
      SandboxBashExecutor.layer({ network: { allow: ["bench.test"], hosts: { "bench.test": "127.0.0.1" } } })
    )
  ]
  const sequential = async (runner: Runner) =>
    (await timed(async () => {
      for (let i = 0; i < count; i++) await runner.run(commands[runner.id]!)
    })).ms
  try {
    for (const runner of runners) for (let i = 0; i < 5; i++) await runner.run(commands[runner.id]!)
    const samples = await interleavedRounds(runners, rounds, sequential)
    const perCall = (id: string) => median(samples.values[id]!) / count
    return runners.map((runner) => ({
      id: runner.id,
      label: runner.label,
      msPerCall: round(perCall(runner.id), 2),
      addedMs: round(perCall(runner.id) - perCall("host"), 2)
    }))
  } finally {
    for (const runner of runners) await runner.close()
    await new Promise((resolve) => server.close(resolve))
  }
}
