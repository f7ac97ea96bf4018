/**
 * `Process.onExit` of the Node spawner, the callback the supervisor waits on (exit, timeout and
 * abort in one callback), and its pipes read from the start, with real processes.
 */
import { describe, expect, it } from "@effect/vitest"
import { Deferred, Effect, Stream } from "effect"
import * as LocalBashExecutor from "../../src/layers/LocalBashExecutor.js"
import * as NodeProcessSpawner from "../../src/layers/NodeProcessSpawner.js"
import { BashExecutor } from "../../src/services/BashExecutor.js"
import { ProcessSpawner } from "../../src/services/ProcessSpawner.js"
import { firstPid, liveMembers } from "../support/processes.js"

const spawn = (command: string) =>
  Effect.flatMap(ProcessSpawner, (spawner) => spawner.spawn({ command, cwd: process.cwd(), env: { PATH: process.env.PATH ?? "/usr/bin:/bin" } }))

describe("NodeProcessSpawner onExit", () => {
  it.live("calls a listener at exit, and at once when the leader has already exited", () =>
    Effect.gen(function*() {
      const process = yield* spawn("exit 7")
      const seen = yield* Deferred.make<ProcessSpawner.Exit>()
      const onExit = process.onExit
      onExit((exit) => Deferred.unsafeDone(seen, Effect.succeed(exit)))
      expect(yield* Deferred.await(seen)).toEqual({ exitCode: 7, signal: null })
      const late: Array<ProcessSpawner.Exit> = []
      onExit((exit) => late.push(exit))
      expect(late).toEqual([{ exitCode: 7, signal: null }])
    }).pipe(Effect.scoped, Effect.provide(NodeProcessSpawner.layer)))

  it.live("never calls a listener that was removed", () =>
    Effect.gen(function*() {
      const process = yield* spawn("exit 0")
      const removedCalls: Array<ProcessSpawner.Exit> = []
      const remove = process.onExit((exit) => removedCalls.push(exit))
      remove()
      expect(yield* process.exit).toEqual({ exitCode: 0, signal: null })
      expect(removedCalls).toEqual([])
    }).pipe(Effect.scoped, Effect.provide(NodeProcessSpawner.layer)))
})

describe("NodeProcessSpawner pipes", () => {
  it.live("keep the output of a command that exited before they were read (Node resumes stdio at exit)", () =>
    Effect.gen(function*() {
      const process = yield* spawn("echo out; echo err >&2")
      yield* process.exit
      // Past the tick after exit, where Node resumes every stdio stream nobody has taken.
      yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 20)))
      const out: Array<Uint8Array> = []
      const err: Array<Uint8Array> = []
      yield* process.openPipes({ stdout: (chunk) => void out.push(chunk), stderr: (chunk) => void err.push(chunk) }).drain
      expect([Buffer.concat(out).toString(), Buffer.concat(err).toString()]).toEqual(["out\n", "err\n"])
    }).pipe(Effect.scoped, Effect.provide(NodeProcessSpawner.layer)))
})

describe("the supervisor on the live clock", () => {
  it.live("an abort signal ends a call and kills its group", () =>
    Effect.gen(function*() {
      const bash = yield* BashExecutor
      const abort = new AbortController()
      const live = yield* bash.runStreaming(yield* bash.resolve({ command: "echo $$; sleep 100", signal: abort.signal }))
      // Aborted once the command has said its pid, so the group it kills is the one that printed it.
      yield* live.output.pipe(Stream.take(1), Stream.runDrain)
      abort.abort()
      const result = yield* live.result
      expect(result).toMatchObject({ aborted: true, timedOut: false, signal: "SIGTERM" })
      expect(liveMembers(firstPid(result.stdout.text))).toEqual([])
    }).pipe(Effect.scoped, Effect.provide(LocalBashExecutor.layer({ graceMs: 300 }))))
})
