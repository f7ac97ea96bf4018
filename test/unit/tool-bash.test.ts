import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync } from "node:fs"
import { tmpdir } from "node:os"
import * as path from "node:path"
import { afterAll, describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Logger, Option } from "effect"
import * as ApprovalScripted from "../../src/testing/ApprovalScripted.js"
import * as FakeConfiningExecutor from "../../src/testing/FakeConfiningExecutor.js"
import * as ScriptedBashExecutor from "../../src/testing/ScriptedBashExecutor.js"
import { bashRunResult, untilAborted } from "../../src/testing/ScriptedBashExecutor.js"
import * as SessionJsonlEnvContributor from "../../src/layers/SessionJsonlEnvContributor.js"
import * as SessionPersistenceJsonl from "../../src/layers/SessionPersistenceJsonl.js"
import { SpawnError } from "../../src/services/ProcessSpawner.js"
import { SessionPersistence } from "../../src/services/SessionPersistence.js"
import { AgentTools } from "../../src/services/AgentTools.js"
import { callTool, compose, composeWith, composeWithApproval, dshHome, textOf, withTasks } from "../support/tools.js"

const scripted = (config: Parameters<typeof ScriptedBashExecutor.layer>[0] = {}) => ScriptedBashExecutor.layer(config)
const recorded = Effect.flatMap(ScriptedBashExecutor.ScriptedBashExecutor, (executor) => executor.calls)
/** Lets forked calls progress until the executor has been asked `n` times (bounded). */
const untilRecorded = (n: number) =>
  Effect.gen(function*() {
    for (let turn = 0; turn < 1000 && (yield* recorded).length < n; turn++) yield* Effect.yieldNow()
    expect((yield* recorded).length).toBe(n)
  })
const ok = { command: "echo hi", description: "Print a greeting" }

const scratch = mkdtempSync(path.join(tmpdir(), "tool-bash-"))
afterAll(() => rmSync(scratch, { recursive: true, force: true }))

describe("bash validation: exact messages, nothing runs", () => {
  const cases: ReadonlyArray<readonly [string, unknown, string]> = [
    ["no arguments", undefined, "invalid command: expected a non-empty string"],
    ["missing command", { description: "x" }, "invalid command: expected a non-empty string"],
    ["blank command", { command: "   ", description: "x" }, "invalid command: expected a non-empty string"],
    ["non-string command", { command: 5, description: "x" }, "invalid command: expected a non-empty string"],
    ["missing description", { command: "ls" }, "invalid description: expected a non-empty string"],
    ["blank description", { command: "ls", description: "" }, "invalid description: expected a non-empty string"],
    ["zero timeout", { ...ok, timeoutMs: 0 }, "invalid timeoutMs: expected a positive number, got 0"],
    ["negative timeout", { ...ok, timeoutMs: -5 }, "invalid timeoutMs: expected a positive number, got -5"],
    ["string timeout", { ...ok, timeoutMs: "100" }, "invalid timeoutMs: expected a positive number, got \"100\""],
    ["null timeout", { ...ok, timeoutMs: null }, "invalid timeoutMs: expected a positive number, got null"],
    ["blank workdir", { ...ok, workdir: "" }, "invalid workdir: expected a non-empty string, got \"\""],
    ["NUL byte in command", { ...ok, command: "echo a\0b" }, "invalid command: expected a string without NUL bytes"],
    ["NUL byte in workdir", { ...ok, workdir: "src\0" }, "invalid workdir: expected a path without NUL bytes, got \"src\\u0000\""],
    [
      "over-long workdir",
      { ...ok, workdir: "d".repeat(300) },
      `invalid workdir: longer than the OS allows (4095 bytes, 255 per name), got "${"d".repeat(199)}…`
    ],
    [
      "huge timeout value, echoed capped",
      { ...ok, timeoutMs: "1".repeat(1_000_000) },
      `invalid timeoutMs: expected a positive number, got "${"1".repeat(199)}…`
    ],
    ["non-boolean background", { ...ok, run_in_background: "yes" }, "invalid run_in_background: expected a boolean, got \"yes\""],
    [
      "escalation without a sandboxing executor",
      { ...ok, sandbox_permissions: "danger-full-access", justification: "needs /etc" },
      "sandbox_permissions is not available in this composition (no sandboxing executor to escalate)"
    ]
  ]
  for (const [name, args, message] of cases) {
    it.effect(name, () =>
      Effect.gen(function*() {
        const result = yield* callTool("bash", args)
        expect(result).toEqual({ isError: true, message, text: `Error: ${message}` })
        expect(yield* recorded).toEqual([])
      }).pipe(Effect.provide(compose({ executor: scripted() }))))
  }

  const confined: ReadonlyArray<readonly [string, unknown, string]> = [
    ["permissions without justification", { ...ok, sandbox_permissions: "danger-full-access" }, "invalid escalation: sandbox_permissions requires a justification"],
    ["justification without permissions", { ...ok, justification: "because" }, "invalid escalation: justification is only valid together with sandbox_permissions"],
    ["blank justification", { ...ok, sandbox_permissions: "danger-full-access", justification: "  " }, "invalid justification: expected a non-empty sentence"],
    [
      "unknown mode",
      { ...ok, sandbox_permissions: "root", justification: "because" },
      "invalid sandbox_permissions: expected one of \"workspace-write\", \"danger-full-access\", got \"root\""
    ]
  ]
  for (const [name, args, message] of confined) {
    it.effect(name, () =>
      Effect.gen(function*() {
        expect(yield* textOf("bash", args)).toBe(`Error: ${message}`)
        expect(yield* Effect.flatMap(FakeConfiningExecutor.FakeConfiningExecutor, (executor) => executor.calls)).toEqual([])
      }).pipe(Effect.provide(composeWith({ executor: FakeConfiningExecutor.layer(), services: withTasks(ApprovalScripted.layer(["allowed-once"])) }))))
  }

  it.effect("a forced background call while background execution is disabled", () =>
    Effect.gen(function*() {
      expect(yield* textOf("bash", { ...ok, run_in_background: true })).toBe(
        "Error: run_in_background is disabled for this deployment: run the command in the foreground"
      )
      expect(yield* recorded).toEqual([])
    }).pipe(Effect.provide(compose({ executor: scripted(), enableRunInBackground: false }))))

  it.effect("a background call with no task runtime composed", () =>
    Effect.gen(function*() {
      const result = yield* callTool("bash", { ...ok, run_in_background: true })
      expect(result.isError).toBe(true)
      expect(result.text).toBe(
        "Error: background tasks unavailable: compose a Tasks layer (TasksLive) with AgentToolsLive, which attaches the task tools"
      )
      expect(yield* recorded).toEqual([])
    }).pipe(Effect.provide(composeWith({ executor: scripted(), services: Layer.empty }))))

  it.effect("an unknown tool", () =>
    Effect.gen(function*() {
      expect(yield* textOf("shell", ok)).toBe("Error: unknown tool \"shell\"")
    }).pipe(Effect.provide(compose({ executor: scripted() }))))
})

describe("published tools per composition", () => {
  const bashProperties = Effect.map(AgentTools, (tools) => Object.keys(tools.tools[0]!.parameters.properties))

  it.effect("default: bash with run_in_background, and the three task tools", () =>
    Effect.gen(function*() {
      const tools = yield* AgentTools
      expect(tools.tools.map((tool) => tool.name)).toEqual(["bash", "task_output", "task_list", "task_kill"])
      expect(yield* bashProperties).toEqual(["command", "description", "timeoutMs", "workdir", "run_in_background"])
      expect(tools.tools[0]!.parameters.required).toEqual(["command", "description"])
      expect(tools.tools[2]!.parameters).toEqual({ type: "object", properties: {}, additionalProperties: false })
      expect(tools.tools[1]!.parameters.required).toEqual(["task_id"])
      expect(tools.tools[0]!.description).not.toContain("sandbox_permissions")
    }).pipe(Effect.provide(compose({ executor: scripted() }))))

  it.effect("background disabled: no run_in_background", () =>
    Effect.gen(function*() {
      expect(yield* bashProperties).toEqual(["command", "description", "timeoutMs", "workdir"])
    }).pipe(Effect.provide(compose({ executor: scripted(), enableRunInBackground: false }))))

  it.effect("no task runtime: bash only", () =>
    Effect.gen(function*() {
      expect((yield* AgentTools).tools.map((tool) => tool.name)).toEqual(["bash"])
    }).pipe(Effect.provide(composeWith({ executor: scripted(), services: Layer.empty }))))

  it.effect("a confining executor adds sandbox_permissions (closed enum) and justification", () =>
    Effect.gen(function*() {
      const bash = (yield* AgentTools).tools[0]!
      expect(Object.keys(bash.parameters.properties)).toEqual([
        "command",
        "description",
        "timeoutMs",
        "workdir",
        "run_in_background",
        "sandbox_permissions",
        "justification"
      ])
      expect(bash.parameters.properties["sandbox_permissions"]).toMatchObject({
        type: "string",
        enum: ["workspace-write", "danger-full-access"]
      })
      expect(bash.description).toContain("sandbox_permissions")
    }).pipe(Effect.provide(composeWithApproval({ executor: FakeConfiningExecutor.layer() }))))

  it.effect("the tool:bash prompt section at order 105 asks for the exit-code check", () =>
    Effect.gen(function*() {
      const [section, ...others] = (yield* AgentTools).promptSections
      expect(others).toEqual([])
      expect(section).toMatchObject({ name: "tool:bash", order: 105 })
      expect(section!.text).toContain("[exit code: N]")
    }).pipe(Effect.provide(compose({ executor: scripted() }))))
})

describe("what reaches the executor", () => {
  it.effect("unknown and trusted-caller keys from the model are dropped", () =>
    Effect.gen(function*() {
      yield* textOf("bash", {
        ...ok,
        env: { AWS_SECRET_ACCESS_KEY: "x" },
        stdin: "y",
        stdoutMaxBytes: 1,
        dshEnv: { DSH_HOME: "/evil" },
        owner: "someone",
        sandboxPolicy: { mode: "danger-full-access", workspaceRoot: "/" },
        signal: "nope"
      })
      const [call, ...rest] = yield* recorded
      expect(rest).toEqual([])
      expect(call!.op).toBe("run")
      expect(Object.keys(call!.spec).sort()).toEqual(["command", "dshEnv", "stdoutMaxBytes", "timeoutMs", "workdir"])
      expect(call!.spec.stdoutMaxBytes).toBe(64_000)
      expect(call!.spec.dshEnv).toEqual({ DSH_HOME: dshHome, DSH_SHELL: "1" })
    }).pipe(Effect.provide(compose({ executor: scripted() }))))

  it.effect("timeoutMs is passed on and capped by the executor's resolve", () =>
    Effect.gen(function*() {
      yield* textOf("bash", { ...ok, timeoutMs: 5000 })
      yield* textOf("bash", { ...ok, timeoutMs: 9_000_000 })
      expect((yield* recorded).map((call) => call.spec.timeoutMs)).toEqual([5000, 600_000])
    }).pipe(Effect.provide(compose({ executor: scripted() }))))

  it.effect("every call collects a fresh managed environment: exactly DSH_HOME, DSH_SHELL, DSH_SESSION_ID", () =>
    Effect.gen(function*() {
      yield* textOf("bash", ok, { session: { id: "s-1" } })
      yield* textOf("bash", ok, { session: { id: "s-2" } })
      yield* textOf("bash", ok)
      expect((yield* recorded).map((call) => call.spec.dshEnv)).toEqual([
        { DSH_HOME: dshHome, DSH_SESSION_ID: "s-1", DSH_SHELL: "1" },
        { DSH_HOME: dshHome, DSH_SESSION_ID: "s-2", DSH_SHELL: "1" },
        { DSH_HOME: dshHome, DSH_SHELL: "1" }
      ])
    }).pipe(Effect.provide(compose({ executor: scripted() }))))

  it.effect("with JSONL persistence, DSH_SESSION_JSONL names the session's file", () =>
    Effect.gen(function*() {
      yield* textOf("bash", ok, { session: { id: "s-1" } })
      const [call] = yield* recorded
      const location = yield* Effect.flatMap(SessionPersistence, (p) => p.locate({ id: "s-1" }))
      expect(Option.isSome(location)).toBe(true)
      expect(call!.spec.dshEnv).toEqual({
        DSH_HOME: dshHome,
        DSH_SESSION_ID: "s-1",
        DSH_SESSION_JSONL: Option.getOrThrow(location).path,
        DSH_SHELL: "1"
      })
    }).pipe(
      Effect.provide(composeWith({
        executor: scripted(),
        services: withTasks(Layer.provideMerge(
          SessionJsonlEnvContributor.layer,
          SessionPersistenceJsonl.layer({ directory: path.join(scratch, "env-sessions") })
        ))
      }))
    ))
})

describe("workdir", () => {
  const real = realpathSync(scratch)
  mkdirSync(path.join(scratch, "project", "sub"), { recursive: true })
  symlinkSync(path.join(scratch, "project"), path.join(scratch, "link"))
  const workdirs = Effect.map(recorded, (calls) => calls.map((call) => call.spec.workdir))

  it.effect("defaults to the session cwd's filesystem identity; relative is taken from it; absolute wins", () =>
    Effect.gen(function*() {
      const session = { id: "s", cwd: path.join(scratch, "link") }
      yield* textOf("bash", ok, { session })
      yield* textOf("bash", { ...ok, workdir: "sub" }, { session })
      yield* textOf("bash", { ...ok, workdir: "/opt" }, { session })
      expect(yield* workdirs).toEqual([path.join(real, "project"), path.join(real, "project", "sub"), "/opt"])
    }).pipe(Effect.provide(compose({ executor: scripted() }))))

  it.effect("without a session the executor's default applies", () =>
    Effect.gen(function*() {
      yield* textOf("bash", ok)
      yield* textOf("bash", { ...ok, workdir: "sub" })
      expect(yield* workdirs).toEqual(["/exec/default", "/exec/default/sub"])
    }).pipe(Effect.provide(compose({ executor: scripted({ cwd: "/exec/default" }) }))))

  it.effect("under a sandbox policy the canonical workspace root is the base; the policy carries the mode and the session's directory as given", () =>
    Effect.gen(function*() {
      yield* textOf("bash", { ...ok, workdir: "sub" }, { session: { id: "s", cwd: path.join(scratch, "link") } })
      const [call] = yield* Effect.flatMap(FakeConfiningExecutor.FakeConfiningExecutor, (executor) => executor.calls)
      expect(call!.spec.sandboxPolicy).toEqual({ mode: "workspace-write", workspaceRoot: path.join(scratch, "link") })
      expect(call!.spec.workdir).toBe(path.join(real, "project", "sub"))
    }).pipe(Effect.provide(compose({ executor: FakeConfiningExecutor.layer() }))))

  it.effect("under a sandbox policy a workdir spelled through a symlink is given canonically", () =>
    Effect.gen(function*() {
      const session = { id: "s", cwd: path.join(scratch, "project") }
      const write = { command: "echo x > notes.txt", description: "Write a note" }
      expect(yield* textOf("bash", { ...write, workdir: path.join(scratch, "link", "sub") }, { session })).toBe("(no output)")
      const [call] = yield* Effect.flatMap(FakeConfiningExecutor.FakeConfiningExecutor, (executor) => executor.calls)
      expect(call!.spec.workdir).toBe(path.join(real, "project", "sub"))
      expect(call!.spec.sandboxPolicy?.workspaceRoot).toBe(path.join(real, "project"))
    }).pipe(Effect.provide(compose({ executor: FakeConfiningExecutor.layer() }))))
})

describe("foreground results", () => {
  it.effect("the value is { kind: 'foreground', ...BashRunResult } and the text is rendered", () =>
    Effect.gen(function*() {
      const result = yield* callTool("bash", ok)
      expect(result).toEqual({
        isError: false,
        value: { kind: "foreground", ...bashRunResult({ stdout: { text: "failing\n", truncated: false }, exitCode: 3 }) },
        text: "failing\n[exit code: 3]"
      })
    }).pipe(Effect.provide(compose({
      executor: scripted({ runs: [bashRunResult({ stdout: { text: "failing\n", truncated: false }, exitCode: 3 })] })
    }))))

  it.effect("a defect inside a tool is an error result, never a failure of call", () =>
    Effect.gen(function*() {
      const result = yield* callTool("bash", ok)
      expect(result).toEqual({ isError: true, message: "internal error in bash: boom", text: "Error: internal error in bash: boom" })
    }).pipe(Effect.provide(compose({ executor: scripted({ runs: [() => Effect.die(new Error("boom"))] }) }))))

  it.effect("a defect's ERROR log line carries its message, not message={}", () => {
    const lines: Array<string> = []
    const capture = Logger.replace(
      Logger.defaultLogger,
      Logger.map(Logger.logfmtLogger, (line) => void lines.push(line))
    )
    return Effect.gen(function*() {
      yield* callTool("bash", ok)
      const errors = lines.filter((line) => line.includes("level=ERROR"))
      expect(errors).toHaveLength(1)
      expect(errors[0]).toContain("message=\"internal error in bash: boom\"")
      expect(errors[0]).toContain("cause=\"Error: boom")
      expect(errors[0]).not.toContain("message={}")
    }).pipe(
      Effect.provide(compose({ executor: scripted({ runs: [() => Effect.die(new Error("boom"))] }) })),
      Effect.provide(capture)
    )
  })

  it.effect("an infrastructure fault is an error result with its message", () =>
    Effect.gen(function*() {
      const result = yield* callTool("bash", ok)
      expect(result).toEqual({ isError: true, message: "spawn bash ENOENT", text: "Error: spawn bash ENOENT" })
      const tools = yield* AgentTools
      expect(yield* tools.call("bash", ok, { callId: "x" })).toMatchObject({ isError: true, message: "spawn bash ENOENT" })
    }).pipe(Effect.provide(compose({
      executor: scripted({
        runs: [0, 1].map(() => () => Effect.fail(new SpawnError({ code: "ENOENT", message: "spawn bash ENOENT" })))
      })
    }))))

  it.effect("a call whose signal already fired runs nothing: `command aborted`", () =>
    Effect.gen(function*() {
      const controller = new AbortController()
      controller.abort()
      expect(yield* textOf("bash", ok, { signal: controller.signal })).toBe("Error: command aborted")
      expect(yield* recorded).toEqual([])
    }).pipe(Effect.provide(compose({ executor: scripted() }))))

  it.effect("aborting a running call ends it with `command aborted`", () =>
    Effect.gen(function*() {
      const controller = new AbortController()
      const fiber = yield* Effect.fork(callTool("bash", ok, { signal: controller.signal }))
      yield* untilRecorded(1)
      controller.abort()
      const result = yield* fiber.await.pipe(Effect.flatten)
      expect(result).toEqual({ isError: true, message: "command aborted", text: "Error: command aborted" })
      // The abort is the call's interruption: no AbortSignal is threaded into the executor.
      const [call] = yield* recorded
      expect(call!.spec).not.toHaveProperty("signal")
    }).pipe(Effect.provide(compose({ executor: scripted({ runs: [untilAborted] }) }))))
})

describe("call records (replay without parsing text)", () => {
  const persistence = () => SessionPersistenceJsonl.layer({ directory: path.join(scratch, `records-${Math.random()}`) })
  const session = { id: "replayed" }

  it.effect("every call with a session is recorded with its arguments, structured value or error, and text", () =>
    Effect.gen(function*() {
      yield* textOf("bash", ok, { session, callId: "c1" })
      yield* textOf("bash", { command: "" }, { session, callId: "c2" })
      yield* textOf("bash", ok)
      const records = yield* Effect.flatMap(SessionPersistence, (p) => p.replay(session))
      expect(records).toEqual([
        {
          session,
          callId: "c1",
          toolName: "bash",
          arguments: ok,
          isError: false,
          result: { kind: "foreground", ...bashRunResult({ stdout: { text: "done\n[exit code: 7]\n", truncated: false } }) },
          text: "done\n[exit code: 7]\n"
        },
        {
          session,
          callId: "c2",
          toolName: "bash",
          arguments: { command: "" },
          isError: true,
          result: { message: "invalid command: expected a non-empty string" },
          text: "Error: invalid command: expected a non-empty string"
        }
      ])
    }).pipe(Effect.provide(composeWith({
      executor: scripted({ runs: [bashRunResult({ stdout: { text: "done\n[exit code: 7]\n", truncated: false } })] }),
      services: withTasks(persistence())
    }))))

  it.effect("a replayed result presents the exit status of the stored value, not the text's last line", () =>
    Effect.gen(function*() {
      yield* textOf("bash", { ...ok, workdir: "/srv" }, { session, callId: "c1" })
      const [record] = yield* Effect.flatMap(SessionPersistence, (p) => p.replay(session))
      const bash = (yield* AgentTools).tools[0]!
      expect(bash.presentCall(record!.arguments)).toEqual({
        kind: "terminal",
        title: "echo hi",
        description: "Print a greeting",
        cwd: "/srv"
      })
      expect(bash.presentResult(record!.arguments, record!.result)).toEqual({
        kind: "terminal",
        title: "echo hi",
        description: "Print a greeting",
        cwd: "/srv",
        output: "done\n[exit code: 7]\n",
        exitCode: 0,
        signal: null,
        timedOut: false
      })
    }).pipe(Effect.provide(composeWith({
      executor: scripted({ runs: [bashRunResult({ stdout: { text: "done\n[exit code: 7]\n", truncated: false } })] }),
      services: withTasks(persistence())
    }))))

  it.effect("a stored value that is not a whole bash result presents as the call card (never throws)", () =>
    Effect.gen(function*() {
      const bash = (yield* AgentTools).tools[0]!
      const callCard = bash.presentCall(ok)
      for (
        const stored of [
          { kind: "foreground", exitCode: 0, stdout: { text: "hi\n", truncated: false } },
          { kind: "foreground", exitCode: 0, stdout: null, stderr: null },
          { kind: "foreground", stdout: { truncated: false }, stderr: { text: "" } },
          { kind: "background" },
          "hi\n"
        ]
      ) {
        expect(bash.presentResult(ok, stored)).toEqual(callCard)
      }
    }).pipe(Effect.provide(compose({ executor: scripted() }))))

  it.effect("a background start presents as an execute card naming the task", () =>
    Effect.gen(function*() {
      const bash = (yield* AgentTools).tools[0]!
      const args = { ...ok, run_in_background: true }
      expect(bash.presentCall(args)).toEqual({ kind: "execute", title: "echo hi", description: "Print a greeting" })
      expect(bash.presentResult(args, { kind: "background", taskId: "bash-3" })).toEqual({
        kind: "execute",
        title: "echo hi",
        description: "Print a greeting",
        detail: "task bash-3"
      })
    }).pipe(Effect.provide(compose({ executor: scripted() }))))
})
