/**
 * The parameter Schemas decode the model's loose input with the exact messages: fields in their
 * order, then the escalation as one step (the pair rule, then justification, then the mode), as
 * `validateBashArgs` checked them before the typed parameters.
 */
import { describe, expect, it } from "@effect/vitest"
import { Cause, Effect, Exit, Option } from "effect"
import * as BashTool from "../../src/tool/BashTool.js"
import { backgroundDisabledMessage, parametersFor } from "../../src/tool/internal/bashParameters.js"
import * as TaskOutputTool from "../../src/tool/TaskOutputTool.js"

const ok = { command: "echo hi", description: "Print a greeting" }
/** The failure's message, or `decoded`. */
const messageOf = (exit: Exit.Exit<unknown, { readonly message: string }>): string =>
  Exit.isSuccess(exit) ? "decoded" : Cause.failureOption(exit.cause).pipe(Option.match({
    onNone: () => `not a failure: ${Cause.pretty(exit.cause)}`,
    onSome: (error) => error.message
  }))

const decode = (policy: BashTool.Policy, raw: unknown) =>
  Effect.runSync(Effect.exit(parametersFor(policy).decode(raw)))

const sandboxed = { background: true, sandbox: true, escalation: true }

describe("bash parameters", () => {
  it("the escalation is one step after the other fields: the pair rule, then justification, then the mode", () => {
    expect(messageOf(decode(sandboxed, { ...ok, timeoutMs: 0, sandbox_permissions: "root" }))).toBe(
      "invalid timeoutMs: expected a positive number, got 0"
    )
    expect(messageOf(decode(sandboxed, { ...ok, sandbox_permissions: "root" }))).toBe(
      "invalid escalation: sandbox_permissions requires a justification"
    )
    expect(messageOf(decode(sandboxed, { ...ok, justification: " " }))).toBe(
      "invalid escalation: justification is only valid together with sandbox_permissions"
    )
    expect(messageOf(decode(sandboxed, { ...ok, sandbox_permissions: "root", justification: " " }))).toBe(
      "invalid justification: expected a non-empty sentence"
    )
    expect(messageOf(decode(sandboxed, { ...ok, sandbox_permissions: "root", justification: "needs it" }))).toBe(
      "invalid sandbox_permissions: expected one of \"workspace-write\", \"danger-full-access\", got \"root\""
    )
  })

  it("decodes to the model's fields, unknown keys and keys set to undefined dropped", () => {
    const exit = decode(sandboxed, { ...ok, timeoutMs: undefined, env: { A: "1" }, stdin: "x", sandbox_permissions: "workspace-write", justification: "writes the build" })
    expect(exit).toEqual(Exit.succeed({ ...ok, sandbox_permissions: "workspace-write", justification: "writes the build" }))
  })

  it("an unadvertised field is refused in its turn, or ignored, and never published", () => {
    const plain = { background: false, sandbox: false, escalation: false }
    expect(messageOf(decode(plain, { ...ok, timeoutMs: -1, run_in_background: true }))).toBe(
      "invalid timeoutMs: expected a positive number, got -1"
    )
    expect(messageOf(decode(plain, { ...ok, run_in_background: true, sandbox_permissions: "x" }))).toBe(
      backgroundDisabledMessage
    )
    expect(decode(plain, { ...ok, run_in_background: "yes", justification: 5 })).toEqual(Exit.succeed(ok))
    expect(Object.keys(parametersFor(plain).jsonSchema.properties)).toEqual([
      "command",
      "description",
      "timeoutMs",
      "workdir"
    ])
  })

  it("anything but an object counts as no arguments", () => {
    for (const raw of [undefined, null, 5, "ls", [ok]]) {
      expect(messageOf(decode(sandboxed, raw))).toBe("invalid command: expected a non-empty string")
    }
  })
})

describe("task_output parameters", () => {
  it("a missing task id is echoed as undefined", () => {
    expect(messageOf(Effect.runSync(Effect.exit(TaskOutputTool.parameters.decode({ wait: false }))))).toBe(
      "invalid task_id: expected a non-empty string, got undefined"
    )
  })
})
