/**
 * Reliability: a seeded fuzz of hostile argument objects through `AgentTools.call` — bash (over the
 * scripted executor, so nothing runs) and the task tools. Every call answers with a result (never a
 * defect, a throw or a hang); invalid input gets the exact contract message. Replay a failure with
 * `FUZZ_SEED=<seed printed in the failure> npx vitest run test/unit/fuzzed-calls-always-answer.test.ts`.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Exit } from "effect"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll } from "vitest"
import * as ScriptedBashExecutor from "../../src/testing/ScriptedBashExecutor.js"
import { AgentTools } from "../../src/services/AgentTools.js"
import type { Rng } from "../support/fuzz.js"
import { fuzzArguments, fuzzSeed, hostileString, makeRng } from "../support/fuzz.js"
import { compose } from "../support/tools.js"

const cwd = mkdtempSync(join(tmpdir(), "effect-bash-fuzz-"))
afterAll(() => rmSync(cwd, { recursive: true, force: true }))

const calls = 5_000
const seed = fuzzSeed(20_261_130)

/** The contract's quoting of a value in a message (restated here, not imported). */
const quoted = (value: unknown): string => {
  try {
    return JSON.stringify(value) ?? String(value)
  } catch {
    return Object.prototype.toString.call(value)
  }
}
const displayed = (value: unknown): string => {
  try {
    const text = String(value)
    return text.length > 200 ? `${text.slice(0, 200)}…` : text
  } catch {
    return Object.prototype.toString.call(value)
  }
}
const nonBlank = (value: unknown): value is string => typeof value === "string" && value.trim() !== ""
const positive = (value: unknown) => typeof value === "number" && Number.isFinite(value) && value > 0

// Other changes may add messages for NUL bytes and very long values (and cap echoed values): exact
// messages are asserted only when every field the validation reads is free of both.
const plainValue = (value: unknown): boolean => {
  const text = typeof value === "string" ? value : quoted(value)
  return text.length <= 150 && !text.includes("\u0000") && !text.includes("\\u0000")
}
const plainFields = (raw: unknown, fields: ReadonlyArray<string>): boolean => {
  const input = typeof raw === "object" && raw !== null ? raw as Record<string, unknown> : {}
  return fields.every((field) => plainValue(input[field]))
}
const record = (raw: unknown): Record<string, unknown> => (typeof raw === "object" && raw !== null ? raw as never : {})

type Expected = { readonly error: string } | { readonly ok: string } | { readonly oneOf: ReadonlyArray<string> }

/** The `bash` tool's validation, in its order, for a composition with background and no sandbox. */
const expectBash = (raw: unknown): Expected => {
  const input = record(raw)
  const { command, description, timeoutMs, workdir } = input
  const background = input["run_in_background"]
  if (!nonBlank(command)) return { error: "invalid command: expected a non-empty string" }
  if (!nonBlank(description)) return { error: "invalid description: expected a non-empty string" }
  if (timeoutMs !== undefined && !positive(timeoutMs)) {
    return { error: `invalid timeoutMs: expected a positive number, got ${quoted(timeoutMs)}` }
  }
  if (workdir !== undefined && !nonBlank(workdir)) {
    return { error: `invalid workdir: expected a non-empty string, got ${quoted(workdir)}` }
  }
  if (background !== undefined && typeof background !== "boolean") {
    return { error: `invalid run_in_background: expected a boolean, got ${quoted(background)}` }
  }
  if (input["sandbox_permissions"] !== undefined) {
    return { error: "sandbox_permissions is not available in this composition (no sandboxing executor to escalate)" }
  }
  return { ok: background === true ? "background" : "foreground" }
}

const taskIdError = (id: unknown) => `invalid task_id: expected a non-empty string, got ${quoted(id)}`
// The fuzzing session owns no task: a valid id is unknown or another session's.
const noSuchTask = (id: string) => ({ oneOf: [`unknown task ${id}`, `task ${id} belongs to another session`] })

/** The task tools' validation. */
const expectTask = (tool: string, raw: unknown): Expected => {
  const input = record(raw)
  const id = input["task_id"]
  if (tool === "task_list") return { ok: "(no background tasks)" }
  if (!nonBlank(id)) return { error: taskIdError(id) }
  if (tool === "task_output") {
    const wait = input["wait"]
    const timeout = input["timeout_ms"]
    if (wait !== undefined && typeof wait !== "boolean") return { error: `invalid wait: expected a boolean, got ${quoted(wait)}` }
    if (timeout !== undefined && !positive(timeout)) {
      return { error: `invalid wait timeout: expected a positive number of milliseconds, got ${displayed(timeout)}` }
    }
    return noSuchTask(id)
  }
  const reason = input["reason"]
  if (reason !== undefined && typeof reason !== "string") return { error: `invalid reason: expected a string, got ${quoted(reason)}` }
  return noSuchTask(id)
}

const bases: Record<string, Readonly<Record<string, unknown>>> = {
  bash: { command: "echo hi", description: "print a greeting", timeoutMs: 5_000, workdir: ".", run_in_background: false },
  task_output: { task_id: "bash-1", wait: false, timeout_ms: 10 },
  task_kill: { task_id: "bash-1", reason: "done with it" },
  task_list: {}
}
const readFields: Record<string, ReadonlyArray<string>> = {
  bash: ["command", "description", "timeoutMs", "workdir", "run_in_background", "sandbox_permissions"],
  task_output: ["task_id", "wait", "timeout_ms"],
  task_kill: ["task_id", "reason"],
  task_list: []
}

const oneCall = (rng: Rng) => {
  const tool = rng.chance(0.6) ? "bash" : rng.pick(["task_output", "task_kill", "task_list", hostileString(rng).slice(0, 12)])
  const base = tool === "bash" ? { ...bases[tool], run_in_background: rng.chance(0.05) } : bases[tool] ?? {}
  const args = fuzzArguments(rng, base)
  return { tool, args }
}

/** The general invariant: a well-formed result. */
const checkShape = (result: AgentTools.Result, context: string) => {
  expect(typeof result.text, context).toBe("string")
  if (result.isError) {
    // Bad input is never reported as an internal error.
    expect(result.message, context).not.toMatch(/internal error/)
    expect(result.message.length, context).toBeGreaterThan(0)
    expect(result.text, context).toBe(`Error: ${result.message}`)
  }
}

const describeCall = (index: number, tool: string, args: unknown) => {
  let shown: string
  try {
    shown = (JSON.stringify(args) ?? String(args)).slice(0, 300)
  } catch {
    shown = Object.prototype.toString.call(args)
  }
  return `seed ${seed}, call ${index}: ${tool} ${shown}`
}

describe(`reliability fuzz through AgentTools.call (seed ${seed})`, () => {
  it.live(`${calls} hostile argument objects: every call answers, invalid input gets the exact message`, () =>
    Effect.gen(function*() {
      const tools = yield* AgentTools
      const rng = makeRng(seed)
      const bashSession = { id: "fuzz-bash", cwd }
      const taskSession = { id: "fuzz-tasks", cwd }
      const outcomes = { rejected: 0, ran: 0, background: 0, other: 0 }
      for (let index = 0; index < calls; index++) {
        const { args, tool } = oneCall(rng)
        const context = describeCall(index, tool, args)
        const session = tool === "bash" ? bashSession : taskSession
        const exit = yield* Effect.exit(
          tools.callUnknown(tool, args, { callId: `fuzz-${index}`, session }).pipe(Effect.timeout(5_000))
        )
        if (!Exit.isSuccess(exit)) expect.fail(`${context}\ndid not answer: ${String(exit.cause)}`)
        const result = exit.value
        checkShape(result, context)
        if (!Object.hasOwn(bases, tool)) {
          expect(result.isError, context).toBe(true)
          if (plainValue(tool)) expect(result, context).toMatchObject({ message: `unknown tool "${tool}"` })
          outcomes.other++
          continue
        }
        if (!plainFields(args, readFields[tool]!)) {
          outcomes.other++
          continue
        }
        const expected = tool === "bash" ? expectBash(args) : expectTask(tool, args)
        if ("error" in expected) {
          expect(result, context).toMatchObject({ isError: true, message: expected.error })
          outcomes.rejected++
        } else if ("oneOf" in expected) {
          expect(result.isError, context).toBe(true)
          expect(expected.oneOf, context).toContain(result.isError ? result.message : result.text)
          outcomes.rejected++
        } else if (tool === "bash") {
          expect(result.isError, `${context}\n${result.text}`).toBe(false)
          expect((result as { value: { kind: string } }).value.kind, context).toBe(expected.ok)
          if (expected.ok === "background") expect(result.text, context).toMatch(/^started background task bash-\d+$/)
          outcomes[expected.ok === "background" ? "background" : "ran"]++
        } else {
          expect(result, context).toMatchObject({ isError: false, text: expected.ok })
          outcomes.ran++
        }
      }
      // Nothing leaked into the shared prototypes, and the fuzz reached every branch.
      expect(Object.keys(Object.prototype)).toEqual([])
      expect(({} as Record<string, unknown>)["polluted"]).toBeUndefined()
      expect(outcomes.rejected).toBeGreaterThan(calls / 3)
      expect(outcomes.ran).toBeGreaterThan(50)
      expect(outcomes.background).toBeGreaterThan(20)
      expect(outcomes.rejected + outcomes.ran + outcomes.background + outcomes.other).toBe(calls)
    }).pipe(Effect.provide(compose({ executor: ScriptedBashExecutor.layer({ cwd }), enableRunInBackground: true }))),
  // 5000 calls take about 20 s on a quiet 2-core machine: the bound is for a loaded one.
  { timeout: 180_000 })
})
