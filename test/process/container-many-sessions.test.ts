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
      const seen = yield* Effect.scoped(Effect.gen(function*() {
        const context = yield* Layer.build(DockerBashExecutor.layer({ image: testImage, cwd: workspace, graceMs: 500 }))
        const bash = Context.get(context, BashExecutor)
        const call = (session: string, n: number) =>
          Effect.flatMap(
            bash.resolve({ command: `echo ${n} >> /tmp/calls; echo "$DSH_SESSION_ID ${n}"`, dshEnv: { DSH_SESSION_ID: session } }),
            bash.run
          )
        const sessions = Array.from({ length: sessionCount }, (_, i) => `${prefix}${i}`)
        const results = yield* Effect.forEach(
          sessions.flatMap((session) => [[session, 1], [session, 2]] as const),
          ([session, n]) => call(session, n),
          { concurrency: "unbounded" }
        )
        results.forEach((result, i) => {
          const session = sessions[Math.floor(i / 2)]!
          expect(result).toMatchObject({ exitCode: 0, stdout: { text: `${session} ${(i % 2) + 1}\n` } })
        })
        const boxes = leftBoxes()
        expect(new Set(boxes).size).toBe(sessionCount)
        expect(boxes).toHaveLength(sessionCount)
        // Each session's box (its own /tmp) saw its own two calls, no other session's.
        const own = yield* Effect.forEach(
          sessions,
          (session) => Effect.flatMap(bash.resolve({ command: "sort /tmp/calls | tr '\\n' ' '", dshEnv: { DSH_SESSION_ID: session } }), bash.run),
          { concurrency: "unbounded" }
        )
        return own.map((result) => result.stdout.text)
      }))
      expect(new Set(seen)).toEqual(new Set(["1 2 "]))
      expect(leftBoxes()).toEqual([])
    }), 120_000)
})
