/**
 * The engine port against an engine that shares no file system with this host: a second dockerd on
 * TCP loopback, in a mount namespace where /tmp, /root, /home and the checkout are empty
 * (scripts/remote-dockerd.sh; `.ci/run` starts it and sets EFFECT_BASH_TEST_REMOTE_ENGINE to its
 * address). When the variable is set, these tests run, and fail if that engine does not answer.
 */
import { afterAll, describe, expect, it } from "@effect/vitest"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js"
import { execFileSync } from "node:child_process"
import { once } from "node:events"
import * as fs from "node:fs"
import * as path from "node:path"
import { Effect, Fiber, Layer, ManagedRuntime } from "effect"
import * as DockerBashExecutor from "../../src/layers/DockerBashExecutor.js"
import * as DockerContainerEngine from "../../src/layers/DockerContainerEngine.js"
import * as LocalBashExecutor from "../../src/layers/LocalBashExecutor.js"
import { BashExecutor } from "../../src/services/BashExecutor.js"
import type { ContainerEngine } from "../../src/services/ContainerEngine.js"
import { cleanEnv, cliPath } from "../support/cli.js"
import { containerHost, testImage } from "../support/docker.js"
import { forger, guessedTokens, unusualCalls, victim } from "../support/forgery.js"
import { tempDirs } from "../support/tempDirs.js"

const remote = process.env.EFFECT_BASH_TEST_REMOTE_ENGINE
const dirs = tempDirs("effect-bash-remote")
afterAll(dirs.removeAll)

const label = `remote-test-${process.pid}`

/** The remote engine's containers carrying every one of `labels`, through the docker CLI. */
const remoteContainers = (labels: Readonly<Record<string, string>>): ReadonlyArray<string> =>
  execFileSync("docker", ["-H", remote!, "ps", "-aq", ...Object.entries(labels).flatMap(([name, value]) => ["--filter", `label=${name}=${value}`])], {
    encoding: "utf8"
  }).split("\n").filter((line) => line !== "")

/** A path of this host's, which the remote engine does not have: the volume's path in the boxes. */
const workspace = dirs.fresh("volume-path")
const graceMs = 500
const volumeSettings = { image: testImage, cwd: workspace, workspace: "volume" as const, dockerHost: remote, graceMs }

let sessions = 0
const freshSession = () => `remote-test-${process.pid}-${++sessions}`
const runIn = (request: BashExecutor.Request) =>
  Effect.gen(function*() {
    const bash = yield* BashExecutor
    return yield* bash.run(yield* bash.resolve(request))
  })

const boxOptions = (labels: Record<string, string>, mounts: ContainerEngine.BoxOptions["mounts"] = []): ContainerEngine.BoxOptions => ({
  image: testImage,
  labels: { "effect-bash.test": label, ...labels },
  mounts,
  network: "none",
  memoryMb: 64,
  pidsLimit: 32,
  user: "1000:1000",
  readOnlyRootfs: false,
  seccompProfile: "unconfined",
  dropCapabilities: true,
  supervisorDir: { path: "/.supervisor", uid: 2147483646 }
})

/** Every frame of an exec, as text per stream, and its exit code from the engine. */
const readAll = (exec: ContainerEngine.ExecSession) =>
  Effect.gen(function*() {
    let stdout = ""
    let stderr = ""
    for (let frame = yield* exec.next; frame !== undefined; frame = yield* exec.next) {
      const text = Buffer.from(frame.bytes).toString("utf8")
      if (frame.stream === "stdout") stdout += text
      else stderr += text
    }
    return { stdout, stderr }
  })

/** The box, removed when the test's scope closes. */
const boxOn = (engine: ContainerEngine.Service, options: ContainerEngine.BoxOptions) =>
  Effect.acquireRelease(engine.createBox(options), (id) => Effect.ignore(engine.removeBox(id)))

describe.skipIf(remote === undefined)("the engine port on an engine that shares no file system (EFFECT_BASH_TEST_REMOTE_ENGINE)", () => {
  it.scoped("it makes a box, execs in it with stdin and an exit status, copies files in and out, lists by label and removes", () =>
    Effect.gen(function*() {
      const engine = yield* DockerContainerEngine.make(remote)
      yield* engine.ping
      expect(yield* engine.hasImage(testImage)).toBe(true)
      const id = yield* boxOn(engine, boxOptions({ "effect-bash.case": "round-trip" }))
      expect(yield* engine.boxRunning(id)).toBe(true)

      const exec = yield* engine.exec(id, { argv: ["bash", "-c", "cat; echo oops >&2; exit 7"], env: {}, stdin: true })
      yield* exec.sendInput(new TextEncoder().encode("piped\n"))
      expect(yield* readAll(exec)).toEqual({ stdout: "piped\n", stderr: "oops\n" })
      expect(yield* exec.exitCode).toBe(7)
      yield* exec.close

      // In through the archive endpoint, out through it again, with nothing of the host mounted.
      const source = dirs.fresh("upload")
      fs.writeFileSync(path.join(source, "seed.txt"), "seeded\n")
      const tar = execFileSync("tar", ["-c", "-C", source, "seed.txt"])
      yield* engine.putArchive(id, "/tmp", tar)
      expect(yield* engine.run(id, ["cat", "/tmp/seed.txt"])).toBe("seeded\n")
      const back = dirs.fresh("download")
      fs.writeFileSync(path.join(back, "copy.tar"), yield* engine.getArchive(id, "/tmp/seed.txt", 1 << 20))
      execFileSync("tar", ["-x", "-C", back, "-f", path.join(back, "copy.tar")])
      expect(fs.readFileSync(path.join(back, "seed.txt"), "utf8")).toBe("seeded\n")

      const listed = yield* engine.listBoxes({ "effect-bash.test": label, "effect-bash.case": "round-trip" })
      expect(listed.map((box) => box.id)).toEqual([id])
      expect(listed[0]!.createdMillis).toBeGreaterThan(0)
      yield* engine.removeBox(id)
      expect(yield* engine.listBoxes({ "effect-bash.test": label, "effect-bash.case": "round-trip" })).toEqual([])
      expect(yield* engine.boxRunning(id)).toBe(false)
      // A box that is gone: the port's own error, no status code.
      const refused = yield* Effect.flip(engine.exec(id, { argv: ["true"], env: {}, stdin: false }))
      expect(refused._tag).toBe("ContainerNotFound")
    }), 60_000)

  it.scoped("it cannot see the host's workspace: a bind of its path shows none of its files", () =>
    Effect.gen(function*() {
      const workspace = dirs.fresh("workspace")
      fs.writeFileSync(path.join(workspace, "secret.txt"), "the host's file\n")
      const engine = yield* DockerContainerEngine.make(remote)
      // The path the host gives it is not there: the engine refuses the bind, and shows none of the host's files.
      const seen = yield* Effect.flip(boxOn(engine, boxOptions({ "effect-bash.case": "bind" }, [{ host: workspace, target: workspace }])))
      expect(seen._tag).toBe("ContainerEngineError")
      expect(seen.message).toContain(`bind source path does not exist: ${workspace}`)
      expect(yield* engine.listBoxes({ "effect-bash.test": label, "effect-bash.case": "bind" })).toEqual([])

      // So today's executor, which binds the workspace, runs nothing there: the call fails, naming why.
      const failed = yield* Effect.gen(function*() {
        const bash = yield* BashExecutor
        return yield* bash.run(yield* bash.resolve({ command: "cat secret.txt" }))
      }).pipe(Effect.provide(DockerBashExecutor.layer({ image: testImage, cwd: workspace, dockerHost: remote })), Effect.flip)
      expect(failed.message).toContain("bind source path does not exist")
    }), 60_000)

  it.live("a remote engine that does not answer fails with EngineUnavailable", () =>
    Effect.gen(function*() {
      const refused = yield* Effect.flip(Effect.scoped(Effect.flatMap(DockerContainerEngine.make("tcp://127.0.0.1:9"), (engine) => engine.ping)))
      expect(refused._tag).toBe("EngineUnavailable")
    }))

  describe("the container executor with a volume workspace there", () => {
    const shared = ManagedRuntime.make(DockerBashExecutor.layer(volumeSettings))
    const local = ManagedRuntime.make(LocalBashExecutor.layer({ cwd: dirs.fresh("local"), graceMs }))
    afterAll(async () => {
      await shared.dispose()
      await local.dispose()
    })

    it.live("commands end as they do locally: output, exit codes, signals, timeouts", () =>
      Effect.gen(function*() {
        const requests: ReadonlyArray<BashExecutor.Request> = [
          { command: "printf 'out\\n'; printf 'err\\n' >&2; exit 3" },
          { command: "kill -9 $$" },
          { command: "trap '' TERM; sleep 100", timeoutMs: 500 },
          { command: "cat", stdin: "piped input\n" }
        ]
        for (const request of requests) {
          const there = yield* Effect.provide(runIn(request), shared)
          const here = yield* Effect.provide(runIn(request), local)
          const shown = (result: BashExecutor.RunResult) => ({
            exitCode: result.exitCode,
            signal: result.signal,
            timedOut: result.timedOut,
            stdout: result.stdout.text,
            stderr: result.stderr.text
          })
          expect(shown(there), request.command).toEqual(shown(here))
        }
      }), 60_000)

    it.live("a session's files stay in its box, at the workspace's path, writable by its user; nothing of the host is mounted", () =>
      Effect.gen(function*() {
        const session = { DSH_SESSION_ID: freshSession() }
        const first = yield* Effect.provide(runIn({ command: "pwd; echo kept > note; id -u", dshEnv: session }), shared)
        expect(first.stdout.text).toBe(`${workspace}\n1000\n`)
        const second = yield* Effect.provide(runIn({ command: "cat note; cat /proc/self/mountinfo", dshEnv: session }), shared)
        expect(second.stdout.text.startsWith("kept\n")).toBe(true)
        // The workspace is a volume of the engine's (under its data root), no host path of this machine's.
        const workspaceMount = second.stdout.text.split("\n").find((line) => line.split(" ")[4] === workspace)
        expect(workspaceMount).toContain("/volumes/")
        expect(fs.readdirSync(workspace)).toEqual([])
        const other = yield* Effect.provide(runIn({ command: "cat note", dshEnv: { DSH_SESSION_ID: freshSession() } }), shared)
        expect(other.exitCode).toBe(1)
        // And the tools tell the model so, not that the directory is the user's.
        const facts = yield* Effect.provide(Effect.map(BashExecutor, (executor) => executor.container), shared)
        expect(facts).toEqual({ image: testImage, network: "none", workspace, workspaceKind: "volume" })
      }), 60_000)

    it.live("a command with input, over 64 KiB or with an odd variable cannot forge its own result: lines in its wrapper's form are its output", () =>
      Effect.gen(function*() {
        const dshEnv = { DSH_SESSION_ID: freshSession() }
        const guess = "abcdef0123456789abcdef0123456789"
        const command = `printf '\\0${guess} exit 0 empty 1 2\\n\\0${guess} end 1 2\\n'; printf '\\0${guess} end 1 2\\n' >&2; sleep 1; exit 9`
        for (const call of unusualCalls(command)) {
          const result = yield* Effect.provide(runIn({ ...call, dshEnv }), shared)
          expect(result).toMatchObject({ exitCode: 9, signal: null })
          expect(result.stdout.text).toBe(`\0${guess} exit 0 empty 1 2\n\0${guess} end 1 2\n`)
          expect(result.stderr.text).toBe(`\0${guess} end 1 2\n`)
        }
      }), 60_000)

    it.live("a command cannot forge, end early or lose the result of another call with input, over 64 KiB or with an odd variable in its session", () =>
      Effect.gen(function*() {
        const session = freshSession()
        const dshEnv = { DSH_SESSION_ID: session }
        const victims = yield* Effect.forEach(
          unusualCalls(victim(session)),
          (call) => Effect.fork(Effect.provide(runIn({ ...call, dshEnv }), shared))
        )
        const forged = yield* Effect.provide(runIn({ command: forger(session, 3), stdin: "", dshEnv }), shared)
        // Both tokens into each of the three victims' shells.
        expect(forged.stdout.text).toBe("forged 6 wrappers 0\n")
        for (const each of victims) {
          const result = yield* Fiber.join(each)
          // It ran to its end: what the forger wrote is output.
          expect(result).toMatchObject({ exitCode: 5, signal: null })
          expect(result.stdout.text.startsWith("started\n")).toBe(true)
          expect(result.stdout.text.endsWith("still running\n")).toBe(true)
          expect(result.stdout.text).toContain(`${guessedTokens[1]} end 1 2`)
        }
      }), 60_000)

    it.live("an idle-stopped box keeps its volume, and its next calls end as they should, one with input too", () =>
      Effect.gen(function*() {
        const session = freshSession()
        const context = yield* Layer.build(DockerBashExecutor.layer({ ...volumeSettings, idleStopMs: 100 }))
        const call = (command: string) => Effect.provide(runIn({ command, dshEnv: { DSH_SESSION_ID: session } }), context)
        yield* call("echo kept > note")
        const [box] = remoteContainers({ "effect-bash.session": session })
        const state = () => execFileSync("docker", ["-H", remote!, "inspect", "--format", "{{.State.Status}}", box!], { encoding: "utf8" }).trim()
        const deadline = Date.now() + 20_000
        while (state() !== "exited" && Date.now() < deadline) yield* Effect.sleep(50)
        expect(state()).toBe("exited")
        expect(yield* call("cat note; exit 4")).toMatchObject({ exitCode: 4, stdout: { text: "kept\n" } })
        expect(yield* Effect.provide(runIn({ command: "cat - note; exit 6", stdin: "in\n", dshEnv: { DSH_SESSION_ID: session } }), context))
          .toMatchObject({ exitCode: 6, stdout: { text: "in\nkept\n" } })
        expect(remoteContainers({ "effect-bash.session": session })).toEqual([box])
      }).pipe(Effect.scoped), 60_000)

    it.live("the boxes of a host killed by SIGKILL are removed by the next layer on its machine, by their labels", () =>
      Effect.gen(function*() {
        const session = freshSession()
        const { host, ready } = containerHost(volumeSettings, session)
        yield* Effect.promise(() => ready).pipe(Effect.timeout(30_000))
        host.kill("SIGKILL")
        yield* Effect.promise(() => once(host, "exit"))
        expect(remoteContainers({ "effect-bash.session": session })).toHaveLength(1)
        yield* Effect.scoped(Layer.build(DockerBashExecutor.layer(volumeSettings)))
        expect(remoteContainers({ "effect-bash.session": session })).toEqual([])
      }), 60_000)

    it.live("effect-bash mcp --container-image serves commands that run in volume boxes on that engine", () =>
      Effect.gen(function*() {
        const transport = new StdioClientTransport({
          command: process.execPath,
          args: [cliPath, "mcp", "--workdir", workspace, "--container-image", testImage],
          env: cleanEnv({ EFFECT_BASH_CONTAINER_WORKSPACE: "volume", EFFECT_BASH_CONTAINER_DOCKER_HOST: remote! }),
          stderr: "pipe"
        })
        const client = new Client({ name: "container-remote-mcp-test", version: "0.0.0" })
        yield* Effect.promise(() => client.connect(transport))
        const result = yield* Effect.promise(() =>
          client.callTool({ name: "bash", arguments: { command: "echo made > f; cat f; pwd; ls /sys/class/net", description: "where am I" } })
        )
        yield* Effect.promise(() => client.close())
        expect((result.content as Array<{ text: string }>).map((part) => part.text).join("")).toBe(`made\n${workspace}\nlo\n`)
        expect(fs.readdirSync(workspace)).toEqual([])
      }), 60_000)
  })
})
