/**
 * Reliability soak: a few hundred real calls through the whole stack and the local executor —
 * foreground, failing, spilling, timed out (TERM and TERM-ignoring), leftovers, aborted, background
 * read and killed. Afterwards this process has exactly the file descriptors it had before, and no
 * process that any of those commands started is alive (found by an environment marker every command
 * inherits, so grandchildren count too).
 */
import { describe, expect, it } from "@effect/vitest"
import { Context, Effect, Exit, Layer, Scope } from "effect"
import { randomUUID } from "node:crypto"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll } from "vitest"
import * as BashStack from "../../src/BashStack.js"
import { AgentTools } from "../../src/services/AgentTools.js"
import { abortOnSignal } from "../../src/tool/abortable.js"
import { eventually } from "../support/cli.js"
import { liveWithEnv, openFds } from "../support/processes.js"

const cwd = mkdtempSync(join(tmpdir(), "effect-bash-soak-"))
afterAll(() => rmSync(cwd, { recursive: true, force: true }))

const marker = `SOAK_RUN=${randomUUID()}`
const rounds = 30 // × 10 kinds of call = 300 calls

/** TERM-ignoring calls whose result named the grace's SIGKILL. */
let killsSeen = 0

const description = "a soak test command"
const stack = BashStack.layer({ executor: { graceMs: 150, maxOutputBytes: 1_000, cwd } })

/** One round: ten kinds of call, run concurrently. */
const round = (tools: AgentTools["Type"], index: number) => {
  const session = { id: `soak-${index % 3}`, cwd }
  const call = (name: string, args: Record<string, unknown>, signal?: AbortSignal) =>
    abortOnSignal(tools.callUnknown(name, args, { callId: `soak-${index}-${name}`, session }), signal)
  const bash = (command: string, extra: Record<string, unknown> = {}, signal?: AbortSignal) =>
    call("bash", { command, description, ...extra }, signal)
  const background = (command: string) =>
    Effect.flatMap(bash(command, { run_in_background: true }), (started) => {
      const id = /bash-\d+/.exec(started.text)?.[0]
      if (id === undefined) return Effect.die(new Error(`no task started: ${started.text}`))
      return Effect.succeed(id)
    })
  const aborted = Effect.suspend(() => {
    const controller = new AbortController()
    setTimeout(() => controller.abort("soak"), 30)
    return bash("sleep 5 & wait", {}, controller.signal)
  })
  const checks: ReadonlyArray<Effect.Effect<void>> = [
    Effect.map(bash(`echo round ${index}`), (result) => expect(result.text).toBe(`round ${index}\n`)),
    Effect.map(bash("echo out; echo err >&2; exit 3"), (result) => expect(result.text).toBe("out\n[stderr]\nerr\n[exit code: 3]")),
    Effect.map(bash("head -c 5000 /dev/zero | tr '\\0' x"), (result) =>
      // Under heavy load the spill may miss the drain bound after exit (graceMs): then its path is withheld.
      expect(result.text).toMatch(/\n\[output truncated; full output: (\/\S+\.log|\(unavailable\))\]$/)),
    Effect.map(bash("sleep 5", { timeoutMs: 40 }), (result) => expect(result.text).toContain("[timed out after 40ms]")),
    // The grace's SIGKILL ends it; on a loaded machine the timeout's TERM may come before bash has
    // set its trap, and end it.
    Effect.map(bash("trap '' TERM; sleep 5", { timeoutMs: 40 }), (result) => {
      expect(result.text).toMatch(/^\(no output\)\n\[timed out after 40ms\]\n\[killed by signal: SIG(KILL|TERM)\]$/)
      if (result.text.endsWith("[killed by signal: SIGKILL]")) killsSeen++
    }),
    Effect.map(bash("sleep 5 & (sleep 5 &); echo left"), (result) => expect(result.text).toBe("left\n")),
    Effect.map(aborted, (result) => expect(result).toMatchObject({ isError: true, message: "command aborted" })),
    Effect.gen(function*() {
      const id = yield* background("echo done")
      const read = yield* call("task_output", { task_id: id, wait: true, timeout_ms: 5_000 })
      expect(read.text).toBe("done\n[status: completed, exit code: 0]")
    }),
    Effect.gen(function*() {
      const id = yield* background("trap '' TERM; sleep 30 & wait")
      expect((yield* call("task_kill", { task_id: id })).text).toBe(`requested cancellation of task ${id}`)
      const read = yield* call("task_output", { task_id: id, wait: true, timeout_ms: 5_000 })
      expect(read.text).toMatch(/\[status: killed/)
    }),
    // The last rounds leave one running (closing the stack must kill it); the others kill it at once
    // and await its end, so that the round's descriptors are counted after it.
    Effect.flatMap(background("sleep 30"), (id) =>
      index >= rounds - 4 ? Effect.void : call("task_kill", { task_id: id }).pipe(
        Effect.zipRight(call("task_output", { task_id: id, wait: true, timeout_ms: 5_000 })),
        Effect.map((read) => expect(read.text).toMatch(/\[status: killed/))
      ))
  ]
  return Effect.all(checks, { concurrency: "unbounded", discard: true })
}

describe("reliability soak (real processes)", () => {
  it.live(`${rounds * 10} real calls: flat fds, no process left`, () =>
    Effect.gen(function*() {
      const [name, value] = marker.split("=") as [string, string]
      process.env[name] = value
      try {
        // A first stack warms up what Node opens once (signal pipes, the child-process machinery).
        yield* Effect.scoped(Effect.flatMap(Layer.build(stack), () => Effect.void))
        yield* Effect.scoped(Effect.flatMap(AgentTools, (tools) => round(tools, -1)).pipe(Effect.provide(stack)))
        const baseline = openFds()

        const scope = yield* Scope.make()
        const context = yield* Layer.buildWithScope(stack, scope)
        const tools = Context.get(context, AgentTools)
        const during: Array<number> = []
        for (let index = 0; index < rounds; index++) {
          yield* round(tools, index)
          during.push(openFds().length)
        }
        yield* Scope.close(scope, Exit.void)

        expect(openFds()).toEqual(baseline)
        // Between rounds nothing of the finished calls stays open: no growth with the number of calls.
        // The layer's own: the reaper's pipe, and /dev/null when the host inherited descriptors.
        const layerFds = 2
        expect(Math.max(...during.slice(0, rounds - 4)) - baseline.length).toBeLessThanOrEqual(layerFds)
        // Then the two pipes of each task the last four rounds leave running.
        expect(Math.max(...during) - baseline.length).toBeLessThanOrEqual(layerFds + 4 * 2)
        expect(yield* Effect.promise(() => eventually(() => liveWithEnv(marker).length === 0, 5_000))).toBe(true)
        expect(killsSeen, "a TERM-ignoring command ends by the grace's SIGKILL").toBeGreaterThan(0)
      } finally {
        delete process.env[name]
      }
    }))
})
