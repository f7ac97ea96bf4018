/**
 * An engine that stops answering under the calls: a Docker Engine of the test's own (never a shared
 * one), stopped with SIGSTOP while a call runs in a session's box, as a hung daemon is. With a short
 * `engineTimeoutMs`, the call in flight ends at its timeout plus that bound, killed, saying the engine
 * stopped answering; once the engine answers again (SIGCONT), the session's next call runs in a new
 * box. A layer closed while the engine does not answer ends within the bound, and the next layer's
 * sweep removes what it left (once the engine, killed meanwhile, has started again: a stopped one
 * would still serve the close's requests when it resumes).
 */
import { afterAll, describe, expect, it } from "@effect/vitest"
import { Context, Effect, Exit, Fiber, Layer, Scope } from "effect"
import { execFileSync } from "node:child_process"
import * as DockerBashExecutor from "../../src/layers/DockerBashExecutor.js"
import { BashExecutor } from "../../src/services/BashExecutor.js"
import { dockerUnavailable, testImage } from "../support/docker.js"
import { startOwnDockerd } from "../support/ownDockerd.js"
import { tempDirs } from "../support/tempDirs.js"

const dirs = tempDirs("effect-bash-slow-engine")
afterAll(dirs.removeAll)

const engineTimeoutMs = 2_000

const escaped = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")

describe.skipIf(dockerUnavailable !== undefined)("an engine that stops answering under the calls (a dockerd of the test's own)", () => {
  it.live("a call in flight ends within its timeout plus the bound, saying so; the next call, once it answers, gets a new box; a close leaves nothing the next layer does not remove", () =>
    Effect.gen(function*() {
      const engine = yield* Effect.acquireRelease(Effect.promise(() => startOwnDockerd("slow", testImage)), (engine) => Effect.promise(engine.stop))
      const docker = (...args: ReadonlyArray<string>) =>
        execFileSync("docker", ["-H", engine.address, ...args], { encoding: "utf8" }).split("\n").filter((line) => line !== "")
      const boxesOf = (session: string) => docker("ps", "-aq", "--no-trunc", "--filter", `label=effect-bash.session=${session}`)
      const executor = (scope: Scope.Scope) =>
        Effect.map(
          Layer.buildWithScope(
            DockerBashExecutor.layer({
              image: testImage,
              cwd: dirs.fresh("volume-path"),
              workspace: "volume",
              dockerHost: engine.address,
              graceMs: 500,
              engineTimeoutMs
            }),
            scope
          ),
          (context) => Context.get(context, BashExecutor)
        )
      const callIn = (bash: BashExecutor["Type"], session: string) => (command: string, timeoutMs?: number) =>
        Effect.flatMap(bash.resolve({ command, dshEnv: { DSH_SESSION_ID: session }, ...(timeoutMs === undefined ? {} : { timeoutMs }) }), bash.run)

      const scope = yield* Scope.make()
      const call = callIn(yield* executor(scope), "hung")
      expect((yield* call("echo warm")).stdout.text).toBe("warm\n")
      const [first] = boxesOf("hung")
      const inFlight = yield* Effect.fork(call("echo started; sleep 60", 3_000))
      // Until the command runs.
      const deadline = Date.now() + 20_000
      while (!docker("top", first!).some((line) => line.includes("sleep 60")) && Date.now() < deadline) yield* Effect.sleep(100)
      engine.freeze()
      // Killed at its timeout, never a success; the kill's request is not answered, and the call says so.
      const ended = yield* Fiber.join(inFlight).pipe(Effect.timeout(30_000))
      expect(ended).toMatchObject({ timedOut: true, exitCode: null, signal: "SIGKILL", stdout: { text: "started\n" } })
      expect(ended.stderr.text).toMatch(new RegExp(
        "^effect-bash: the container engine stopped answering while the command ran, so how it ended is unknown \\(it is reported killed\\): " +
          `(SIGTERM to group \\d+: the container engine|exec create: the Docker Engine) at ${escaped(engine.address)} did not answer within ${engineTimeoutMs} ms\\n$`
      ))
      // While it does not answer, a call fails within the bound, naming the engine.
      const refused = yield* Effect.flip(call("echo refused"))
      expect(refused.message).toMatch(new RegExp(`at ${escaped(engine.address)} did not answer within ${engineTimeoutMs} ms`))

      engine.thaw()
      const next = yield* call("echo again")
      expect(next).toMatchObject({ exitCode: 0, stdout: { text: "again\n" } })
      const second = boxesOf("hung").find((box) => box !== first)
      expect(second).toBeDefined()
      // The layer's close removes them all, the lost box among them, and their volumes.
      yield* Scope.close(scope, Exit.void)
      expect(boxesOf("hung")).toEqual([])

      // A layer closed while the engine does not answer ends within the bound, leaving its box; the
      // engine then dies, its requests unread, and starts again (its boxes stopped, not removed)...
      const closing = yield* Scope.make()
      expect((yield* callIn(yield* executor(closing), "left")("echo left")).exitCode).toBe(0)
      const [left] = boxesOf("left")
      engine.freeze()
      yield* Scope.close(closing, Exit.void).pipe(Effect.timeout(20_000))
      yield* Effect.promise(engine.kill)
      yield* Effect.promise(engine.restart)
      expect(boxesOf("left")).toEqual([left])
      // ...which the next layer's sweep removes, with its volume.
      const later = yield* Scope.make()
      yield* executor(later)
      expect(boxesOf("left")).toEqual([])
      yield* Scope.close(later, Exit.void)
      expect(docker("volume", "ls", "-q", "--filter", "label=effect-bash=1")).toEqual([])
    }).pipe(Effect.scoped), 240_000)
})
