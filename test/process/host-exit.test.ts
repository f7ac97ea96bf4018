/**
 * A host that exits — by process.exit, or by SIGINT/SIGTERM under NodeRuntime.runMain — leaves no
 * process group of ours alive.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { spawn } from "node:child_process"
import { once } from "node:events"
import * as path from "node:path"
import { liveMembers } from "../support/processes.js"

const fixture = path.join(import.meta.dirname, "..", "support", "fixtures", "host.mjs")

const startHost = (mode: "exit" | "wait" | "bare") =>
  Effect.promise(async () => {
    const host = spawn(process.execPath, [fixture, mode], { stdio: ["pipe", "pipe", "inherit"] })
    const [chunk] = (await once(host.stdout, "data")) as [Buffer]
    return { host, pgid: Number(chunk.toString().split("\n")[0]) }
  })

const hostExit = (host: ReturnType<typeof spawn>) =>
  Effect.promise(() =>
    host.exitCode !== null || host.signalCode !== null
      ? Promise.resolve({ code: host.exitCode, signal: host.signalCode })
      : once(host, "exit").then(([code, signal]) => ({ code, signal }))
  )

// SIGKILL is delivered asynchronously: poll (bounded) until the group is gone.
const groupGone = (pgid: number) =>
  Effect.gen(function*() {
    for (let attempt = 0; attempt < 200 && liveMembers(pgid).length > 0; attempt++) yield* Effect.sleep(10)
    return liveMembers(pgid)
  })

// Each test runs its own hosts: they run side by side.
describe.concurrent("host exit", () => {
  it.live("process.exit() SIGKILLs every tracked group", () =>
    Effect.gen(function*() {
      const { host, pgid } = yield* startHost("exit")
      expect(liveMembers(pgid).length).toBeGreaterThan(0)
      host.stdin!.write("go\n")
      expect(yield* hostExit(host)).toEqual({ code: 0, signal: null })
      expect(yield* groupGone(pgid)).toEqual([])
    }))

  for (const signal of ["SIGINT", "SIGTERM"] as const) {
    it.live(`${signal} under NodeRuntime.runMain interrupts, runs our finalizers and still ends the host`, () =>
      Effect.gen(function*() {
        const [baseline, { host, pgid }] = yield* Effect.all([startHost("bare"), startHost("wait")], {
          concurrency: "unbounded"
        })
        baseline.host.kill(signal)
        const expected = yield* hostExit(baseline.host)
        expect(liveMembers(pgid).length).toBeGreaterThan(0)
        host.kill(signal)
        // The host ends exactly as a host without our layer does, and nothing of ours survives.
        expect(yield* hostExit(host)).toEqual(expected)
        expect(yield* groupGone(pgid)).toEqual([])
      }))
  }
})
