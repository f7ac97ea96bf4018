/**
 * Work item (m): what an allow-listed network adds to a `curl` of a small file from a server on this
 * machine. The sandbox's proxies against the same sandbox on the host's network (and the plain local
 * executor); a container's proxies against the same container on the engine's bridge, which reaches the
 * server at the bridge's gateway. The allow-lists pin their test name to the server (`hosts`), so no
 * resolver is involved. The container half needs an image with curl (`BENCH_NETWORK_IMAGE`, default
 * `effect-bash-net-test:latest`, which `scripts/docker-test-image.sh effect-bash-net-test:latest curl`
 * builds) and is skipped, with the reason, without it.
 */
import { mkdtemp, rm } from "node:fs/promises"
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import * as DockerBashExecutor from "../../src/layers/DockerBashExecutor.js"
import * as LocalBashExecutor from "../../src/layers/LocalBashExecutor.js"
import * as SandboxBashExecutor from "../../src/layers/SandboxBashExecutor.js"
import { median, round, timed } from "../lib/stats.js"
import type { NetworkCost, NetworkFound } from "../lib/results.js"
import type { Runner } from "../runners/Runner.js"
import { makeExecutorRunner } from "../runners/ours.js"
import { docker } from "./container.js"
import { interleavedRounds } from "./rounds.js"

/** The container half's image: it needs curl. */
const image = process.env["BENCH_NETWORK_IMAGE"] ?? "effect-bash-net-test:latest"

/** The bridge's gateway (where a bridge box reaches this machine), or why the container half cannot run. */
const bridgeGateway = async (): Promise<{ readonly gateway: string } | { readonly missing: string }> => {
  const found = await docker("image", "inspect", "--format", "{{.Id}}", image)
  if ("failed" in found) return { missing: `image ${image} is missing: run scripts/docker-test-image.sh ${image} curl` }
  const bridge = await docker("network", "inspect", "--format", "{{(index .IPAM.Config 0).Gateway}}", "bridge")
  if ("failed" in bridge || bridge.stdout.trim() === "") return { missing: "the engine has no bridge network" }
  return { gateway: bridge.stdout.trim() }
}

/** A contender, the command it runs, and the one its cost is measured against. */
interface Contender {
  readonly runner: Runner
  readonly command: string
  readonly baseline: string
}

/** Median ms per call of `curl` of a 1 KiB file, over `rounds` × `count` sequential calls per contender. */
export const measureNetwork = async (count: number, rounds: number): Promise<NetworkFound> => {
  const server = http.createServer((_, response) => response.end("x".repeat(1024)))
  // Every interface: a box on the bridge reaches it at the gateway.
  await new Promise<void>((resolve) => server.listen(0, "0.0.0.0", resolve))
  const port = (server.address() as AddressInfo).port
  const curl = (host: string) => `curl -sf -o /dev/null http://${host}:${port}/`
  const allowList = { allow: ["bench.test"], hosts: { "bench.test": "127.0.0.1" } }
  const workspace = await mkdtemp(join(tmpdir(), "effect-bash-bench-network-"))
  const contenders: Array<Contender> = []
  let containerMissing: string | undefined
  try {
    contenders.push(
      // For scale: no confinement at all.
      { runner: await makeExecutorRunner("local", "LocalBashExecutor", LocalBashExecutor.layer()), command: curl("127.0.0.1"), baseline: "local" },
      {
        runner: await makeExecutorRunner("host", "SandboxBashExecutor, read-only, network host", SandboxBashExecutor.layer()),
        command: curl("127.0.0.1"),
        baseline: "host"
      },
      {
        runner: await makeExecutorRunner(
          "allow-list",
          "SandboxBashExecutor, read-only, network { allow }",
          SandboxBashExecutor.layer({ network: allowList })
        ),
        command: curl("bench.test"),
        baseline: "host"
      }
    )
    const bridge = await bridgeGateway()
    if ("missing" in bridge) containerMissing = bridge.missing
    else {
      const box = (id: string, label: string, network: DockerBashExecutor.Settings.Input["network"]) =>
        makeExecutorRunner(id, label, DockerBashExecutor.layer({ image, cwd: workspace, network }))
      contenders.push(
        {
          runner: await box("container-bridge", "DockerBashExecutor, network bridge", "bridge"),
          command: curl(bridge.gateway),
          baseline: "container-bridge"
        },
        {
          runner: await box("container-allow-list", "DockerBashExecutor, network { allow }", allowList),
          command: curl("bench.test"),
          baseline: "container-bridge"
        }
      )
    }
    const commandOf = (runner: Runner) => contenders.find((each) => each.runner === runner)!.command
    const runners = contenders.map((each) => each.runner)
    const sequential = async (runner: Runner) =>
      (await timed(async () => {
        for (let i = 0; i < count; i++) await runner.run(commandOf(runner))
      })).ms
    for (const runner of runners) for (let i = 0; i < 5; i++) await runner.run(commandOf(runner))
    const samples = await interleavedRounds(runners, rounds, sequential)
    const perCall = (id: string) => median(samples.values[id]!) / count
    const rows: Array<NetworkCost> = contenders.map(({ baseline, runner }) => ({
      id: runner.id,
      label: runner.label,
      msPerCall: round(perCall(runner.id), 2),
      baseline,
      addedMs: round(perCall(runner.id) - perCall(baseline), 2)
    }))
    return { count, rounds, rows, ...(containerMissing === undefined ? {} : { containerMissing }) }
  } finally {
    for (const { runner } of contenders.reverse()) await runner.close()
    await new Promise((resolve) => server.close(resolve))
    await rm(workspace, { recursive: true, force: true })
  }
}
