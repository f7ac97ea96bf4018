/**
 * Many sessions on one engine (the local one): 50 sessions, each with two calls at once, all at
 * once. Every session gets a box of its own, every call its own answer, and when the layer closes
 * every box is gone, found by its labels. (A `bind` workspace: a box's own volume, and its going with
 * the box, are container-volumes.test.ts's; here the engine's work per box is the least.)
 */
import { afterAll, describe, expect, it } from "@effect/vitest"
import { Context, Effect, Layer } from "effect"
import { execFileSync } from "node:child_process"
import * as DockerBashExecutor from "../../src/layers/DockerBashExecutor.js"
import { BashExecutor } from "../../src/services/BashExecutor.js"
import { dockerUnavailable, testImage } from "../support/docker.js"
import { tempDirs } from "../support/tempDirs.js"

const dirs = tempDirs("effect-bash-many")
afterAll(dirs.removeAll)

const docker = (...args: ReadonlyArray<string>) => execFileSync("docker", args, { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] })
const prefix = `many-sessions-${process.pid}-`
/** The sessions of this test's boxes (or volumes) the engine still has, one line per box. */
const leftBoxes = () =>
  docker("ps", "-a", "--filter", "label=effect-bash.session", "--format", "{{.Label \"effect-bash.session\"}}").split("\n").filter((s) => s.startsWith(prefix))

const sessionCount = 50

describe.skipIf(dockerUnavailable !== undefined)("many sessions on one engine", () => {
  it.live(`${sessionCount} sessions with two calls each at once: a box each, every call answered, nothing left`, () =>
    Effect.gen(function*() {
      const workspace = dirs.fresh("workspace")
      yield* Effect.scoped(Effect.gen(function*() {
        const context = yield* Layer.build(DockerBashExecutor.layer({ image: testImage, cwd: workspace, graceMs: 500 }))
        const bash = Context.get(context, BashExecutor)
        const call = (session: string, n: number) =>
          Effect.flatMap(
            bash.resolve({ command: `echo "$DSH_SESSION_ID ${n} $HOSTNAME"`, dshEnv: { DSH_SESSION_ID: session } }),
            bash.run
          )
        const sessions = Array.from({ length: sessionCount }, (_, i) => `${prefix}${i}`)
        const results = yield* Effect.forEach(
          sessions.flatMap((session) => [[session, 1], [session, 2]] as const),
          ([session, n]) => call(session, n),
          { concurrency: "unbounded" }
        )
        // Each call answered its own command, in its session's box: the two of a session share one
        // (its hostname), no two sessions do.
        const hostnames = results.map((result, i) => {
          const session = sessions[Math.floor(i / 2)]!
          expect(result.exitCode).toBe(0)
          const [name, n, hostname] = result.stdout.text.trim().split(" ")
          expect([name, n]).toEqual([session, String((i % 2) + 1)])
          return hostname!
        })
        for (let i = 0; i < hostnames.length; i += 2) expect(hostnames[i]).toBe(hostnames[i + 1])
        expect(new Set(hostnames).size).toBe(sessionCount)
        const boxes = leftBoxes()
        expect(new Set(boxes).size).toBe(sessionCount)
        expect(boxes).toHaveLength(sessionCount)
      }))
      expect(leftBoxes()).toEqual([])
    }), 120_000)
})
