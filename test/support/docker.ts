/**
 * The container tests' view of the Docker Engine, through the docker CLI (never through the code
 * under test), and whether there is one to test against.
 */
import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as net from "node:net"
import * as path from "node:path"
import { spawn } from "node:child_process"
import { once } from "node:events"

/** The image `scripts/docker-test-image.sh` builds. */
export const testImage = "effect-bash-test:latest"

const docker = (...args: ReadonlyArray<string>): string =>
  execFileSync("docker", args, { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] })

const engineAnswers = (): boolean => {
  try {
    docker("version", "--format", "{{.Server.APIVersion}}")
    return true
  } catch {
    return false
  }
}

const imagePresent = (): boolean => {
  try {
    docker("image", "inspect", testImage)
    return true
  } catch {
    return false
  }
}

/** Why the container tests cannot run here, or `undefined` when they can. */
export const dockerUnavailable: string | undefined = !fs.existsSync("/var/run/docker.sock") && process.env.DOCKER_HOST === undefined
  ? "no Docker Engine socket (/var/run/docker.sock) and no DOCKER_HOST"
  : !engineAnswers()
  ? "the Docker Engine does not answer"
  : !imagePresent()
  ? `image ${testImage} is missing: run scripts/docker-test-image.sh`
  : undefined

/** The ids of the containers carrying every one of `labels` (running or not). */
export const containersWith = (labels: Readonly<Record<string, string>>): ReadonlyArray<string> =>
  docker("ps", "-aq", "--no-trunc", ...Object.entries(labels).flatMap(([name, value]) => ["--filter", `label=${name}=${value}`]))
    .split("\n")
    .filter((line) => line !== "")

/** The processes running in a container, as `docker top` lists them (`args` only). */
export const processesIn = (container: string): ReadonlyArray<string> =>
  docker("top", container, "-eo", "pid,args").split("\n").slice(1).filter((line) => line.trim() !== "").map((line) => line.trim().replace(/^\d+\s+/, ""))

/** The commands in `container` other than its init, its idle `sleep infinity` and the executor's waiting served wrappers. */
export const commandsIn = (container: string): ReadonlyArray<string> =>
  processesIn(container).filter((args) => !/docker-init|sleep infinity|effect-bash serve$/.test(args))

/** A container's state (`running`, `exited`, …). */
export const containerState = (container: string): string =>
  docker("inspect", "--format", "{{.State.Status}}", container).trim()

/** The host directory mounted at `target` in a container. */
export const mountSource = (container: string, target: string): string => {
  const mounts = JSON.parse(docker("inspect", "--format", "{{json .Mounts}}", container)) as ReadonlyArray<
    { readonly Source: string; readonly Destination: string }
  >
  const mount = mounts.find((each) => each.Destination === target)
  if (mount === undefined) throw new Error(`no mount at ${target} in ${container}`)
  return mount.Source
}

/** Lets a paused container run again. */
export const unpauseContainer = (container: string): void => {
  docker("unpause", container)
}

/** Removes a container, whatever it runs. */
export const removeContainer = (container: string): void => {
  docker("rm", "-f", container)
}

/** Stops a container at once (SIGKILL), as `docker stop -t 0` does. */
export const stopContainer = (container: string): void => {
  docker("stop", "-t", "0", container)
}

/** Restarts a container at once: its processes are killed, and it runs again. */
export const restartContainer = (container: string): void => {
  docker("restart", "-t", "0", container)
}

/** Freezes every process of a container, as `docker pause` does. */
export const pauseContainer = (container: string): void => {
  docker("pause", container)
}

/** The `effect-bash.host` label of every container effect-bash made (running or not). */
export const containerHosts = (): ReadonlyArray<string> =>
  docker("ps", "-a", "--filter", "label=effect-bash=1", "--format", "{{.Label \"effect-bash.host\"}}")
    .split("\n")
    .filter((line) => line !== "")

/**
 * A proxy to the engine's socket that holds back the engine's answer to the first request matching
 * `held` once armed (its connection stays open, silent) until `release` lets it through: `reached`
 * settles once the engine has answered it. It is armed from the start, or with `armed: false` once
 * `arm` is called. With `passUpgrade`, an exec start's upgrade passes, and the exec's output is held.
 */
export const holdingProxy = async (
  dir: string,
  held: RegExp,
  options: { readonly armed?: boolean; readonly passUpgrade?: boolean } = {}
) => {
  const socketPath = path.join(dir, "engine.sock")
  let reach = () => {}
  const reached = new Promise<void>((resolve) => (reach = resolve))
  let armed = options.armed ?? true
  const releases: Array<() => void> = []
  // Half-open both ways: an exec's stdin ends with a half-close, and its output still flows back.
  const server = net.createServer({ allowHalfOpen: true }, (client) => {
    const engine = net.connect({ path: "/var/run/docker.sock", allowHalfOpen: true })
    client.on("end", () => engine.end())
    let holding = false
    let ended = false
    const kept: Array<Buffer> = []
    // The engine's end reaches the client after what was held.
    engine.on("end", () => (holding ? (ended = true) : client.end()))
    client.on("data", (chunk) => {
      if (armed && held.test(chunk.toString("latin1"))) {
        armed = false
        holding = true
        releases.push(() => {
          holding = false
          for (const answer of kept.splice(0)) client.write(answer)
          if (ended) client.end()
        })
      }
      engine.write(chunk)
    })
    engine.on("data", (chunk) => {
      // With `passUpgrade`, an exec's stream opens (its stdin flows) and what it says is held.
      if (!holding || (options.passUpgrade === true && kept.length === 0 && chunk.toString("latin1").startsWith("HTTP/1.1 101"))) {
        return client.write(chunk)
      }
      kept.push(chunk)
      reach()
    })
    const end = () => {
      client.destroy()
      engine.destroy()
    }
    client.on("error", end).on("close", end)
    engine.on("error", end).on("close", () => holding || end())
  })
  await new Promise<void>((resolve) => server.listen(socketPath, resolve))
  return {
    address: `unix://${socketPath}`,
    reached,
    arm: () => (armed = true),
    release: () => {
      for (const release of releases.splice(0)) release()
    },
    close: () => server.close()
  }
}

/**
 * A host process (`node -e`) that starts the container executor with `settings` and runs a
 * background `sleep` in `session`'s box, then idles; `ready` settles once its call has run.
 */
export const containerHost = (settings: Readonly<Record<string, unknown>>, session: string) => {
  const dist = path.join(import.meta.dirname, "..", "..", "dist", "src")
  const script = [
    `import { Effect, Layer, Scope } from "effect"`,
    `const { BashExecutor } = await import(${JSON.stringify(path.join(dist, "index.js"))})`,
    `const { DockerBashExecutor } = await import(${JSON.stringify(path.join(dist, "docker.js"))})`,
    `const scope = Effect.runSync(Scope.make())`,
    `const context = await Effect.runPromise(Layer.buildWithScope(DockerBashExecutor.layer(${JSON.stringify(settings)}), scope))`,
    `const bash = context.unsafeMap.get(BashExecutor.key)`,
    `const spec = await Effect.runPromise(bash.resolve({ command: "sleep 1010 & true", dshEnv: { DSH_SESSION_ID: ${JSON.stringify(session)} } }))`,
    `await Effect.runPromise(bash.run(spec))`,
    `process.stdout.write("ready\\n")`,
    `setInterval(() => {}, 1000)`
  ].join("\n")
  const host = spawn(process.execPath, ["--input-type=module", "-e", script], {
    cwd: path.join(import.meta.dirname, "..", ".."),
    stdio: ["ignore", "pipe", "inherit"]
  })
  return { host, ready: once(host.stdout!, "data") }
}
