/**
 * The engine port against an engine that shares no file system with this host: a second dockerd on
 * TCP loopback, in a mount namespace where /tmp, /root, /home and the checkout are empty
 * (scripts/remote-dockerd.sh; `.ci/run` starts it and sets EFFECT_BASH_TEST_REMOTE_ENGINE to its
 * address). When the variable is set, these tests run, and fail if that engine does not answer.
 */
import { afterAll, describe, expect, it } from "@effect/vitest"
import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { Effect } from "effect"
import * as DockerBashExecutor from "../../src/layers/DockerBashExecutor.js"
import * as DockerContainerEngine from "../../src/layers/DockerContainerEngine.js"
import { BashExecutor } from "../../src/services/BashExecutor.js"
import type { ContainerEngine } from "../../src/services/ContainerEngine.js"
import { testImage } from "../support/docker.js"
import { tempDirs } from "../support/tempDirs.js"

const remote = process.env.EFFECT_BASH_TEST_REMOTE_ENGINE
const dirs = tempDirs("effect-bash-remote")
afterAll(dirs.removeAll)

const label = `remote-test-${process.pid}`

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
      fs.writeFileSync(path.join(back, "copy.tar"), yield* engine.getArchive(id, "/tmp/seed.txt"))
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
})
