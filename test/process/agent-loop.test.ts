/**
 * An Effect agent loop end to end: a scripted `@effect/ai` LanguageModel (no network) drives the
 * BashToolkit over the real LocalBashExecutor, TasksLive and BashEnvRegistryLive. The test asserts
 * the exact texts the model receives, and that no process of the session survives.
 */
import { LanguageModel, Prompt } from "@effect/ai"
import type { Response } from "@effect/ai"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Stream } from "effect"
import * as BashEnvRegistryLive from "../../src/layers/BashEnvRegistryLive.js"
import * as LocalBashExecutor from "../../src/layers/LocalBashExecutor.js"
import * as TasksLive from "../../src/layers/TasksLive.js"
import { CurrentToolSession } from "../../src/services/CurrentToolSession.js"
import * as AgentToolsLive from "../../src/tool/AgentToolsLive.js"
import * as BashToolkit from "../../src/tool/BashToolkit.js"
import { eventually } from "../support/cli.js"
import { commandLineOf, liveWithEnv } from "../support/processes.js"

/** Every spawned process inherits the session id through the managed environment. */
const sessionId = `agent-loop-${process.pid}-${Date.now()}`
const marker = `DSH_SESSION_ID=${sessionId}`

/** The session's processes of the long background job (`sleep 60`), which only task_kill ends. */
const longJob = () => liveWithEnv(marker).filter((pid) => commandLineOf(pid).includes("sleep 60"))

interface Step {
  readonly name: string
  readonly params: Readonly<Record<string, unknown>>
}

/** What the model does, one tool call per turn, then a final answer. */
const script: ReadonlyArray<Step> = [
  { name: "bash", params: { command: "echo hello", description: "Say hello" } },
  { name: "bash", params: { command: "echo failing; exit 3", description: "Fail on purpose" } },
  { name: "bash", params: { command: "echo start; sleep 30", description: "Run past the timeout", timeoutMs: 300 } },
  { name: "bash", params: { command: "", description: "Send an empty command" } },
  {
    name: "bash",
    params: { command: "echo bg-out; sleep 0.2; echo bg-done", description: "Run a short job", run_in_background: true }
  },
  { name: "bash", params: { command: "sleep 60", description: "Run a long job", run_in_background: true } },
  { name: "task_output", params: { task_id: "bash-1", wait: true, timeout_ms: 10_000 } },
  { name: "task_list", params: {} },
  { name: "task_kill", params: { task_id: "bash-2" } },
  { name: "task_output", params: { task_id: "bash-2", wait: true, timeout_ms: 10_000 } }
]

/** What the model must receive for each step, exactly. */
const expected: ReadonlyArray<{ readonly isFailure: boolean; readonly result: unknown }> = [
  { isFailure: false, result: "hello\n" },
  { isFailure: false, result: "failing\n[exit code: 3]" },
  { isFailure: false, result: "start\n[timed out after 300ms]\n[killed by signal: SIGTERM]" },
  { isFailure: true, result: { _tag: "ToolError", message: "invalid command: expected a non-empty string" } },
  { isFailure: false, result: "started background task bash-1" },
  { isFailure: false, result: "started background task bash-2" },
  { isFailure: false, result: "bg-out\nbg-done\n[status: completed, exit code: 0]" },
  {
    isFailure: false,
    result: "bash-1 [bash] completed — echo bg-out; sleep 0.2; echo bg-done\nbash-2 [bash] running — sleep 60"
  },
  { isFailure: false, result: "requested cancellation of task bash-2" },
  { isFailure: false, result: "(no new output)\n[status: killed, signal: SIGTERM]" }
]

/** A model that plays `script` and records the tool results it is shown. */
const scriptedModel = (
  received: Array<{ readonly isFailure: boolean; readonly result: unknown }>,
  seen: Array<number>
) =>
  Layer.effect(
    LanguageModel.LanguageModel,
    LanguageModel.make({
      generateText: (options) =>
        Effect.promise(async () => {
          const last = options.prompt.content.at(-1)
          if (last?.role === "tool") {
            for (const part of last.content) received.push({ isFailure: part.isFailure, result: part.result })
          }
          const turn = received.length
          // Live processes of the session: the long job's while it runs (turn 6; a background task is
          // announced before its spawn completes, so its process is awaited, bounded), and all of them
          // before the final answer, when the kill must already have worked (the layer is still open then).
          if (turn === 6) {
            await eventually(() => longJob().length > 0, 10_000)
            seen.push(longJob().length)
          }
          if (turn === script.length) seen.push(liveWithEnv(marker).length)
          const step = script[turn]
          const parts: Array<Response.PartEncoded> = step === undefined
            ? [{ type: "text", text: "done" }]
            : [{ type: "tool-call", id: `call-${turn + 1}`, name: step.name, params: step.params }]
          return parts
        }),
      streamText: () => Stream.die("the scripted model does not stream")
    })
  )

const tools = BashToolkit.layer.pipe(
  Layer.provideMerge(AgentToolsLive.layer()),
  Layer.provideMerge(
    Layer.mergeAll(
      LocalBashExecutor.layer({ graceMs: 500 }),
      BashEnvRegistryLive.layer({ dshHome: "/tmp/effect-bash-agent-home" }),
      TasksLive.layer()
    )
  ),
  Layer.orDie
)

/** The agent: call the model, let the toolkit run its calls, feed everything back, until it answers. */
const agent = Effect.gen(function*() {
  let prompt = Prompt.make("Exercise the bash tool.")
  for (let turn = 0; turn <= script.length; turn++) {
    const response = yield* LanguageModel.generateText({ prompt, toolkit: BashToolkit.BashToolkit })
    prompt = Prompt.merge(prompt, Prompt.fromResponseParts(response.content))
    if (response.toolCalls.length === 0) return response.text
  }
  return yield* Effect.dieMessage("the model never answered")
}).pipe(Effect.provideService(CurrentToolSession, { id: sessionId, cwd: process.cwd() }))

describe("agent loop over the real executor", () => {
  it.live("the model sees exact texts for foreground, failing, timed-out, invalid, background and task calls", () =>
    Effect.gen(function*() {
      const received: Array<{ readonly isFailure: boolean; readonly result: unknown }> = []
      const alive: Array<number> = []
      const answer = yield* agent.pipe(Effect.provide(Layer.merge(tools, scriptedModel(received, alive))))
      expect(answer).toBe("done")
      expect(received).toEqual(expected)
      expect(alive[0]).toBeGreaterThan(0)
      expect(alive[1]).toBe(0)
      expect(liveWithEnv(marker)).toEqual([])
    }))
})
