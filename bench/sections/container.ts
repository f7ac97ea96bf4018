/**
 * Work item (k): one call of `true` in a warm container, three ways, interleaved: through
 * `DockerBashExecutor`, through `docker exec` of the docker CLI into the same container, and through
 * `LocalBashExecutor` on the host for scale; with `BENCH_CONTAINER_REMOTE_ENGINE`, the executor and the
 * CLI on that engine too. Skipped, with the reason, when no engine answers or the image is missing.
 */
import { execFile, spawn } from "node:child_process"
import { mkdtemp, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import * as DockerBashExecutor from "../../src/layers/DockerBashExecutor.js"
import * as LocalBashExecutor from "../../src/layers/LocalBashExecutor.js"
import type { CallRow, ContainerFound } from "../lib/results.js"
import { makeExecutorRunner } from "../runners/ours.js"
import type { Runner } from "../runners/Runner.js"
import { bashArgs } from "../runners/Runner.js"
import { interleavedCalls, spreadOf } from "./calls.js"

/** The image `scripts/docker-test-image.sh` builds; `BENCH_CONTAINER_IMAGE` names another. */
const image = process.env["BENCH_CONTAINER_IMAGE"] ?? "effect-bash-test:latest"

/** A docker CLI call that must answer within 30 s: its stdout, or the first line of why not. */
export const docker = (...args: ReadonlyArray<string>): Promise<{ readonly stdout: string } | { readonly failed: string }> =>
  new Promise((resolve) => {
    execFile("docker", args, { timeout: 30_000, encoding: "utf8" }, (error, stdout, stderr) => {
      if (error === null) return resolve({ stdout })
      resolve({ failed: (stderr.trim() || error.message).split("\n")[0]! })
    })
  })

/** Why the item cannot run here, or `undefined` when it can. */
const unavailable = async (): Promise<string | undefined> => {
  const version = await docker("version", "--format", "{{.Server.APIVersion}}")
  if ("failed" in version) return `no Docker Engine answers (docker version: ${version.failed})`
  const found = await docker("image", "inspect", "--format", "{{.Id}}", image)
  if ("failed" in found) return `image ${image} is missing: run scripts/docker-test-image.sh`
  return undefined
}

/**
 * An engine that shares no file system with this machine (`tcp://127.0.0.1:2391`), measured beside the
 * local one with a `volume` workspace; unset, its rows are left out.
 */
const remoteEngine = process.env["BENCH_CONTAINER_REMOTE_ENGINE"]

/** `docker exec <container> bash … -c <command>` through the CLI, its output collected; fails on a non-zero exit. */
const dockerCliRunner = (container: string, host?: string): Runner => ({
  id: host === undefined ? "docker-cli" : "docker-cli-remote",
  label: host === undefined ? "`docker exec` (docker CLI)" : `\`docker exec\` (docker CLI), remote engine ${host}`,
  level: "process",
  run: (command) =>
    new Promise((resolve, reject) => {
      const engine = host === undefined ? [] : ["-H", host]
      const child = spawn("docker", [...engine, "exec", container, "bash", ...bashArgs(command)], { stdio: ["ignore", "pipe", "pipe"] })
      let stderr = ""
      child.stdout.resume()
      child.stderr.setEncoding("utf8").on("data", (text: string) => (stderr += text))
      child.once("error", reject)
      child.once("close", (code) => (code === 0 ? resolve() : reject(new Error(`docker exec exited ${code}: ${stderr}`))))
    }),
  close: async () => {}
})

/** `rounds` × `block` calls per contender, after a warm-up that starts the container. */
export const measureContainer = async (rounds: number, block: number): Promise<ContainerFound> => {
  const missing = await unavailable()
  if (missing !== undefined) return { missing }
  const workspace = await mkdtemp(join(tmpdir(), "effect-bash-bench-container-"))
  // The session names the container, so the CLI can exec into the one the executor made.
  const session = `bench-${process.pid}`
  const runners: Array<Runner> = []
  try {
    const ours = await makeExecutorRunner(
      "container",
      "effect-bash DockerBashExecutor",
      DockerBashExecutor.layer({ image, cwd: workspace }),
      { dshEnv: { DSH_SESSION_ID: session } }
    ).catch((error: unknown) => String(error instanceof Error ? error.message : error).split("\n")[0]!)
    if (typeof ours === "string") return { missing: `DockerBashExecutor did not start: ${ours}` }
    runners.push(ours)
    await ours.run("true")
    const listed = await docker("ps", "-q", "--no-trunc", "--filter", `label=effect-bash.session=${session}`)
    const container = "stdout" in listed ? listed.stdout.trim().split("\n")[0] ?? "" : ""
    if (container === "") return { missing: `no container of session ${session} after the first call` }
    runners.push(dockerCliRunner(container))
    runners.push(await makeExecutorRunner("local", "effect-bash LocalBashExecutor (host)", LocalBashExecutor.layer({ cwd: workspace })))
    if (remoteEngine !== undefined) {
      const remote = await makeExecutorRunner(
        "container-remote",
        `effect-bash DockerBashExecutor, remote engine ${remoteEngine} (volume workspace)`,
        DockerBashExecutor.layer({ image, cwd: workspace, dockerHost: remoteEngine, workspace: "volume" }),
        { dshEnv: { DSH_SESSION_ID: session } }
      )
      runners.push(remote)
      await remote.run("true")
      const found = await docker("-H", remoteEngine, "ps", "-q", "--no-trunc", "--filter", `label=effect-bash.session=${session}`)
      const box = "stdout" in found ? found.stdout.trim().split("\n")[0] ?? "" : ""
      if (box === "") return { missing: `no container of session ${session} on ${remoteEngine} after the first call` }
      runners.push(dockerCliRunner(box, remoteEngine))
    }
    for (const runner of runners) for (let i = 0; i < 5; i++) await runner.run("true")
    const times = await interleavedCalls(runners, rounds, block)
    const rows: Array<CallRow> = runners.map((r) => ({ id: r.id, label: r.label, ...spreadOf(times[r.id]!) }))
    return { image, rows }
  } finally {
    for (const runner of runners.reverse()) await runner.close()
    await rm(workspace, { recursive: true, force: true })
  }
}
