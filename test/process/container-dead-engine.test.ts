/**
 * An engine that dies under the calls: on a Docker Engine of the test's own (never a shared one),
 * killed with SIGKILL while a call runs in a session's box, the call in flight ends with a message
 * that says so, never as a success; once the engine is back (it restarts without its boxes' processes),
 * the session's next call runs in a new box.
 */
import { afterAll, describe, expect, it } from "@effect/vitest"
import { Context, Effect, Fiber, Layer } from "effect"
import { execFileSync } from "node:child_process"
import * as DockerBashExecutor from "../../src/layers/DockerBashExecutor.js"
import { BashExecutor } from "../../src/services/BashExecutor.js"
import { dockerUnavailable, testImage } from "../support/docker.js"
import { startOwnDockerd } from "../support/ownDockerd.js"
import { tempDirs } from "../support/tempDirs.js"

const dirs = tempDirs("effect-bash-dead-engine")
afterAll(dirs.removeAll)

describe.skipIf(dockerUnavailable !== undefined)("an engine that dies under the calls (a dockerd of the test's own)", () => {
  it.live("a call in flight when the engine is killed ends saying so; the session's next call, once it is back, gets a new box", () =>
    Effect.gen(function*() {
      const engine = yield* Effect.acquireRelease(Effect.promise(() => startOwnDockerd("dead", testImage)), (engine) => Effect.promise(engine.stop))
      const boxes = () =>
        execFileSync("docker", ["-H", engine.address, "ps", "-q", "--no-trunc", "--filter", "label=effect-bash.session=dying"], { encoding: "utf8" })
          .split("\n").filter((line) => line !== "")
      const workspace = dirs.fresh("volume-path")
      const context = yield* Layer.build(
        DockerBashExecutor.layer({ image: testImage, cwd: workspace, workspace: "volume", dockerHost: engine.address, graceMs: 500 })
      )
      const bash = Context.get(context, BashExecutor)
      const call = (command: string) => Effect.flatMap(bash.resolve({ command, dshEnv: { DSH_SESSION_ID: "dying" } }), bash.run)

      expect((yield* call("echo warm")).stdout.text).toBe("warm\n")
      const [first] = boxes()
      const inFlight = yield* Effect.fork(call("echo started; sleep 60"))
      // Until the command runs.
      const deadline = Date.now() + 20_000
      while (!execFileSync("docker", ["-H", engine.address, "top", first!], { encoding: "utf8" }).includes("sleep 60") && Date.now() < deadline) {
        yield* Effect.sleep(100)
      }
      yield* Effect.promise(engine.kill)
      // It ends (bounded), killed, never a success, and says the engine stopped answering, and where it is.
      const ended = yield* Fiber.join(inFlight).pipe(Effect.timeout(45_000))
      expect(ended).toMatchObject({ exitCode: null, signal: "SIGKILL", stdout: { text: "started\n" } })
      // The request that finds the engine gone is refused (a new connection) or reset (one the engine
      // held open as it died): the text names the error the socket gave.
      expect(ended.stderr.text).toBe(
        "effect-bash: the container engine stopped answering while the command ran, so how it ended is unknown (it is reported killed): " +
          `cannot reach the Docker Engine at ${engine.address} (${/\((ECONNREFUSED|ECONNRESET)\)/.exec(ended.stderr.text)?.[1] ?? "ECONNREFUSED"}): ` +
          "is dockerd running? Set DOCKER_HOST or dockerHost to its address\n"
      )
      // While it is down, a call fails at once, naming the engine.
      const refused = yield* Effect.flip(call("echo refused"))
      expect(refused.message).toContain(`cannot reach the Docker Engine at ${engine.address} (ECONNREFUSED)`)

      yield* Effect.promise(engine.restart)
      const next = yield* call("echo again")
      expect(next).toMatchObject({ exitCode: 0, stdout: { text: "again\n" } })
      const [second] = boxes()
      expect(second).toBeDefined()
      expect(second).not.toBe(first)
    }).pipe(Effect.scoped), 180_000)
})
