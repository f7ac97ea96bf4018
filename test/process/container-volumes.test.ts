/**
 * Volume workspaces on the local engine: a session's own volume carries its box's labels and goes
 * with it, with the layer, and with the sweep after its host was killed by SIGKILL; a volume the user
 * named keeps the files across layers and is never removed, not even by that sweep.
 */
import { afterAll, describe, expect, it } from "@effect/vitest"
import { Context, Effect, Layer } from "effect"
import { execFileSync } from "node:child_process"
import { once } from "node:events"
import * as DockerBashExecutor from "../../src/layers/DockerBashExecutor.js"
import { BashExecutor } from "../../src/services/BashExecutor.js"
import { containerHost, containersWith, dockerUnavailable, testImage } from "../support/docker.js"
import { tempDirs } from "../support/tempDirs.js"

const dirs = tempDirs("effect-bash-volumes")
const named = `effect-bash-test-volume-${process.pid}`
const docker = (...args: ReadonlyArray<string>) => execFileSync("docker", args, { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] })
afterAll(() => {
  try {
    docker("volume", "rm", "-f", named)
  } catch {
    // Not made: the tests were skipped.
  }
  dirs.removeAll()
})

const volumeExists = (name: string) => docker("volume", "ls", "-q", "--filter", `name=^${name}$`).trim() === name
/** The volumes carrying the label `name=value`. */
const volumesLabelled = (name: string, value: string) => docker("volume", "ls", "-q", "--filter", `label=${name}=${value}`).split("\n").filter((line) => line !== "")
/** The engine volume mounted at `target` in `box`. */
const volumeOf = (box: string, target: string) =>
  (JSON.parse(docker("inspect", "--format", "{{json .Mounts}}", box)) as ReadonlyArray<{ Name?: string; Destination: string }>)
    .find((mount) => mount.Destination === target)?.Name

let sessions = 0
const freshSession = () => `volumes-test-${process.pid}-${++sessions}`

const runIn = (context: Context.Context<BashExecutor>, session: string, command: string) => {
  const bash = Context.get(context, BashExecutor)
  return Effect.flatMap(bash.resolve({ command, dshEnv: { DSH_SESSION_ID: session } }), bash.run)
}

describe.skipIf(dockerUnavailable !== undefined)("volume workspaces on the local engine", () => {
  const workspace = dirs.fresh("volume-path")
  const settings = { image: testImage, cwd: workspace, workspace: "volume" as const, graceMs: 500 }

  it.live("a session's own volume carries its box's labels and is removed with it when the layer closes", () =>
    Effect.gen(function*() {
      const session = freshSession()
      const volume = yield* Effect.scoped(Effect.gen(function*() {
        const context = yield* Layer.build(DockerBashExecutor.layer(settings))
        expect((yield* runIn(context, session, "echo hi > f; cat f")).stdout.text).toBe("hi\n")
        const [box] = containersWith({ "effect-bash.session": session })
        const volume = volumeOf(box!, workspace)!
        expect(volumesLabelled("effect-bash.session", session)).toEqual([volume])
        return volume
      }))
      expect(containersWith({ "effect-bash.session": session })).toEqual([])
      expect(volumeExists(volume)).toBe(false)
    }), 60_000)

  it.live("a named volume keeps a session's files for the next layer, and stays when the layer closes", () =>
    Effect.gen(function*() {
      const first = yield* Effect.scoped(Effect.flatMap(
        Layer.build(DockerBashExecutor.layer({ ...settings, workspace: undefined, volume: named })),
        (context) => runIn(context, freshSession(), "echo kept > note; id -u")
      ))
      expect(first.stdout.text).toBe("1000\n")
      expect(volumeExists(named)).toBe(true)
      const second = yield* Effect.scoped(Effect.flatMap(
        Layer.build(DockerBashExecutor.layer({ ...settings, volume: named })),
        (context) => runIn(context, freshSession(), "cat note")
      ))
      expect(second.stdout.text).toBe("kept\n")
      expect(volumeExists(named)).toBe(true)
    }), 60_000)

  it.live("after a host's SIGKILL, the next layer removes its box and the volume made with it, not a named one", () =>
    Effect.gen(function*() {
      const own = freshSession()
      const keptSession = freshSession()
      const hosts = [containerHost(settings, own), containerHost({ ...settings, volume: named }, keptSession)]
      yield* Effect.promise(() => Promise.all(hosts.map(({ ready }) => ready))).pipe(Effect.timeout(30_000))
      const volume = volumeOf(containersWith({ "effect-bash.session": own })[0]!, workspace)!
      for (const { host } of hosts) {
        host.kill("SIGKILL")
        yield* Effect.promise(() => once(host, "exit"))
      }
      expect(volumeExists(volume)).toBe(true)
      yield* Effect.scoped(Layer.build(DockerBashExecutor.layer(settings)))
      expect(containersWith({ "effect-bash.session": own })).toEqual([])
      expect(containersWith({ "effect-bash.session": keptSession })).toEqual([])
      expect(volumeExists(volume)).toBe(false)
      expect(volumeExists(named)).toBe(true)
    }), 60_000)
})
