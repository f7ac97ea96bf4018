/**
 * Asking the user for names beyond the network allow-list (`network_access` on the bash tool),
 * through the approval path escalations use, answered by ApprovalScripted: approved once (this call
 * only) or for the session (its later calls too), refused with exact texts, and every new text
 * verbatim.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { AgentTools } from "../../src/services/AgentTools.js"
import { Approval } from "../../src/services/Approval.js"
import { BashExecutor } from "../../src/services/BashExecutor.js"
import { SandboxSessions } from "../../src/services/SandboxSessions.js"
import * as ApprovalScripted from "../../src/testing/ApprovalScripted.js"
import * as FakeConfiningExecutor from "../../src/testing/FakeConfiningExecutor.js"
import * as ScriptedBashExecutor from "../../src/testing/ScriptedBashExecutor.js"
import * as SandboxSessionsLive from "../../src/layers/SandboxSessionsLive.js"
import { networkApprovalTexts } from "../../src/tool/internal/networkApprovalTexts.js"
import * as ApprovalCallback from "../../src/layers/ApprovalCallback.js"
import * as TerminalApproval from "../../src/cli/terminalApproval.js"
import { callTool, compose, composeWith, textOf, withTasks } from "../support/tools.js"

const network: BashExecutor.NetworkFacts = { allow: ["registry.npmjs.org"], deny: ["gist.github.com"] }

/** The executor layer `executor`, reporting `network`, under the live session store. */
const reporting = <A, E, R>(executor: Layer.Layer<A | BashExecutor, E, R>) =>
  Layer.provideMerge(
    SandboxSessionsLive.layer,
    Layer.effect(BashExecutor, Effect.map(BashExecutor, (fake) => ({ ...fake, network }))).pipe(Layer.provideMerge(executor))
  )

const sandbox = FakeConfiningExecutor.layer({ sandboxMode: "read-only", workspaceRoot: "/work/space", cwd: "/work/space" })

/** A sandbox with an allow-list, and an approval channel answering network requests with `outcomes`. */
const sandboxAsking = (outcomes: ReadonlyArray<Approval.NetworkOutcome>) =>
  composeWith({ executor: reporting(sandbox), services: withTasks(ApprovalScripted.layer([], outcomes)) })

const sandboxCalls = Effect.flatMap(FakeConfiningExecutor.FakeConfiningExecutor, (executor) => executor.calls).pipe(
  Effect.map((calls) => calls.map((call) => call.spec.sandboxPolicy?.networkAllow))
)

const session = { id: "s-ask", cwd: "/work/space" }
const other = { id: "s-other", cwd: "/work/space" }
const asking = {
  command: "npm view left-pad version",
  description: "Read a version",
  network_access: ["registry.yarnpkg.com", "*.cdn.test:443"],
  justification: "The package is only on the yarn registry."
}
const plain = { command: "npm view left-pad version", description: "Read a version" }

const bashSchema = Effect.map(AgentTools, (tools) => tools.tools.find((tool) => tool.name === "bash")!.parameters)

describe("network_access: asking the user for names", () => {
  it("its texts, verbatim", () => {
    expect(networkApprovalTexts.parameter).toBe(
      "Names this one command needs beyond the network allow-list (`host`, `*.domain` or an IP, each with an " +
        "optional `:port`), after a `[network: refused <name>:<port> — not in the allow-list]` line. Requires " +
        "`justification`; the user approves them for this call or for the session."
    )
    expect(networkApprovalTexts.justification(true)).toBe(
      "Required with `sandbox_permissions` or `network_access`: one sentence telling the user why this exact command needs the wider access."
    )
    expect(networkApprovalTexts.justification(false)).toBe(
      "Required with `network_access`: one sentence telling the user why this exact command needs the wider access."
    )
    expect(networkApprovalTexts.question(["a.test", "b.test", "c.test"])).toBe(
      "Allow the bash tool's command to reach a.test, b.test and c.test beyond the network allow-list?"
    )
    expect(networkApprovalTexts.choices).toEqual({ once: "Allow for this command", session: "Allow for this session", reject: "Reject" })
  })

  it.effect("is published with an allow-listed network and an approval channel, and the prompt says how to ask", () =>
    Effect.gen(function*() {
      const schema = yield* bashSchema
      expect(Object.keys(schema.properties)).toEqual([
        "command", "description", "timeoutMs", "workdir", "run_in_background", "sandbox_permissions", "network_access", "justification"
      ])
      expect(schema.properties.network_access).toEqual({
        type: "array",
        items: { type: "string" },
        description: networkApprovalTexts.parameter
      })
      const section = (yield* AgentTools).promptSections.find((each) => each.name === "tool:bash:network")!
      expect(section.text).toBe(
        "Sandboxed commands reach the network only through a proxy that admits these names: registry.npmjs.org " +
          "(never gist.github.com). Clients that honour HTTP_PROXY, HTTPS_PROXY and ALL_PROXY (curl, git over " +
          "http(s), npm, pip) work unchanged; DNS lookups, UDP and direct connections fail. `[network: refused " +
          "<name>:<port> — <reason>]` at the end of a result means the proxy refused that connection: a policy " +
          "decision, not a fault of the command, so do not look for another way around it. Only after a refusal " +
          "`not in the allow-list`, and only if the command needs that name, you may retry the same command once, " +
          "in the same turn, with `network_access` listing the names it needs and a one-sentence `justification`; " +
          "the user is asked to approve them, for that call or for the rest of the session. Never ask for names up " +
          "front or to be safe, never for a name on the deny-list, and if the user refuses, stop and tell the user " +
          "which name the command needed."
      )
    }).pipe(Effect.provide(sandboxAsking([]))))

  it.effect("is not published without an approval channel or without an allow-list, and a call that sends it is told why", () =>
    Effect.gen(function*() {
      expect(Object.keys((yield* bashSchema).properties)).not.toContain("network_access")
      expect(yield* textOf("bash", asking)).toBe(`Error: ${networkApprovalTexts.unavailable}`)
    }).pipe(Effect.provide(compose({ executor: ScriptedBashExecutor.layer() }))))

  it.effect("approved once: this call reaches the names, the next does not; the user saw the whole request", () =>
    Effect.gen(function*() {
      yield* textOf("bash", asking, { session })
      yield* textOf("bash", plain, { session })
      expect(yield* sandboxCalls).toEqual([["registry.yarnpkg.com", "*.cdn.test:443"], undefined])
      const [request] = yield* Effect.flatMap(ApprovalScripted.ApprovalScripted, (scripted) => scripted.networkRequests)
      expect(request).toMatchObject({
        session,
        toolName: "bash",
        reason: "The package is only on the yarn registry.",
        command: "npm view left-pad version",
        names: ["registry.yarnpkg.com", "*.cdn.test:443"],
        workdir: "/work/space",
        background: false
      })
      expect(request!.timeoutMs).toBeGreaterThan(0)
    }).pipe(Effect.provide(sandboxAsking(["allowed-once"]))))

  it.effect("approved for the session: its later calls reach the names too, another session's do not", () =>
    Effect.gen(function*() {
      yield* textOf("bash", asking, { session })
      yield* textOf("bash", plain, { session })
      yield* textOf("bash", plain, { session: other })
      expect(yield* sandboxCalls).toEqual([
        ["registry.yarnpkg.com", "*.cdn.test:443"],
        ["registry.yarnpkg.com", "*.cdn.test:443"],
        undefined
      ])
      expect(yield* (yield* SandboxSessions).networkOf(session.id)).toEqual(["registry.yarnpkg.com", "*.cdn.test:443"])
    }).pipe(Effect.provide(sandboxAsking(["allowed-for-session"]))))

  it.effect("refused, cancelled or unanswerable: the exact message, and nothing runs", () =>
    Effect.gen(function*() {
      const names = "registry.yarnpkg.com and *.cdn.test:443"
      expect(yield* textOf("bash", asking, { session })).toBe(`Error: the user rejected network access to ${names}`)
      expect(yield* textOf("bash", asking, { session })).toBe(`Error: approval for network access to ${names} was cancelled`)
      expect(yield* textOf("bash", asking, { session })).toBe(
        `Error: network access to ${names} requires approval, but no approval channel is available`
      )
      expect(yield* sandboxCalls).toEqual([])
    }).pipe(Effect.provide(sandboxAsking(["rejected", "cancelled"]))))

  it.effect("a bad entry or a missing justification is named before anyone is asked", () =>
    Effect.gen(function*() {
      expect(yield* textOf("bash", { ...asking, network_access: ["ok.test", "not a name"] })).toBe(
        `Error: invalid network_access: entry 1 "not a name" is not a host name, a *.domain wildcard or an IP literal, each with an optional :port`
      )
      expect(yield* textOf("bash", { ...plain, network_access: ["ok.test"] })).toBe(
        "Error: invalid network_access: network_access requires a justification"
      )
      expect(yield* textOf("bash", { ...plain, justification: "because" })).toBe(
        "Error: invalid justification: justification is only valid together with sandbox_permissions or network_access"
      )
      expect(yield* textOf("bash", { ...asking, network_access: [] })).toBe(
        "Error: invalid network_access: expected a list of 1 to 16 host names, got []"
      )
      // The escalation's own message is unchanged.
      expect(yield* textOf("bash", { ...plain, sandbox_permissions: "workspace-write" })).toBe(
        "Error: invalid escalation: sandbox_permissions requires a justification"
      )
      expect(yield* Effect.flatMap(ApprovalScripted.ApprovalScripted, (scripted) => scripted.networkRequests)).toEqual([])
      expect(yield* sandboxCalls).toEqual([])
    }).pipe(Effect.provide(sandboxAsking(["allowed-once"]))))

  it.effect("an executor without a sandbox (a container) gets the names as the request's own networkAllow", () =>
    Effect.gen(function*() {
      const schema = yield* bashSchema
      expect(Object.keys(schema.properties)).toEqual(["command", "description", "timeoutMs", "workdir", "run_in_background", "network_access", "justification"])
      expect(schema.properties.justification).toMatchObject({ description: networkApprovalTexts.justification(false) })
      yield* textOf("bash", asking, { session })
      yield* textOf("bash", plain, { session })
      const calls = yield* Effect.flatMap(ScriptedBashExecutor.ScriptedBashExecutor, (executor) => executor.calls)
      expect(calls.map((call) => [call.spec.networkAllow, call.spec.sandboxPolicy])).toEqual([
        [["registry.yarnpkg.com", "*.cdn.test:443"], undefined],
        [["registry.yarnpkg.com", "*.cdn.test:443"], undefined]
      ])
      expect(yield* textOf("bash", { ...plain, justification: "because" })).toBe(
        "Error: invalid justification: justification is only valid together with network_access"
      )
    }).pipe(Effect.provide(composeWith({
      executor: reporting(ScriptedBashExecutor.layer({ cwd: "/work/space" })),
      services: withTasks(ApprovalScripted.layer([], ["allowed-for-session"]))
    }))))

  it.effect("an approval channel that cannot ask about names answers unavailable", () =>
    Effect.gen(function*() {
      const result = yield* callTool("bash", asking, { session })
      expect(result).toMatchObject({
        isError: true,
        message: "network access to registry.yarnpkg.com and *.cdn.test:443 requires approval, but no approval channel is available"
      })
    }).pipe(Effect.provide(composeWith({
      executor: reporting(sandbox),
      services: withTasks(Layer.succeed(Approval, Approval.of({ request: () => Effect.succeed("allowed-once" as const) })))
    }))))
})

describe("asking a human about network names", () => {
  const request: Approval.NetworkRequest = {
    toolName: "bash",
    callId: "c1",
    reason: "The package is only on the yarn registry.",
    command: "npm view left-pad version",
    names: ["registry.yarnpkg.com", "evil\u202Ename.test"],
    workdir: "/work/space",
    background: false,
    timeoutMs: 120000
  }

  it("the MCP client's question and the terminal's, verbatim, with the model's names escaped", () => {
    expect(networkApprovalTexts.elicitation(request)).toBe([
      "Allow the bash tool's command to reach registry.yarnpkg.com and evil\\u{202E}name.test beyond the network allow-list?",
      "",
      "Command: npm view left-pad version",
      "Working directory: /work/space",
      "Runs: in the foreground, stopped after 120000 ms",
      "Justification (from the model): The package is only on the yarn registry.",
      "",
      "Accept lets this command reach them (\"once\"), or every later command of the session too (\"session\"); " +
      "decline leaves the allow-list as it is and the command does not run."
    ].join("\n"))
    expect(networkApprovalTexts.terminal(request)).toBe(
      "effect-bash: network access is requested: The package is only on the yarn registry.\n" +
        "  working directory: /work/space\n" +
        "  runs: in the foreground, stopped after 120000 ms\n" +
        "allow reaching registry.yarnpkg.com and evil\\u{202E}name.test for: npm view left-pad version? " +
        "[y = this command, s = this session, N = no] "
    )
  })

  it.effect("the terminal prompt: y this command, s the session, anything else no, the end of input cancels", () =>
    Effect.gen(function*() {
      const answers = ["y", "Session", "maybe", undefined]
      const asked: Array<string> = []
      const approval = TerminalApproval.make({
        ask: (question) => {
          asked.push(question)
          return Promise.resolve(answers[asked.length - 1])
        }
      }, { timeoutMs: 60_000 })
      const outcomes = []
      for (let i = 0; i < answers.length; i++) outcomes.push(yield* approval.requestNetwork!(request))
      expect(outcomes).toEqual(["allowed-once", "allowed-for-session", "rejected", "cancelled"])
      expect(asked[0]).toBe(networkApprovalTexts.terminal(request))
    }))

  it.effect("a host callback answers network requests under the same rules; without one they are unavailable", () =>
    Effect.gen(function*() {
      const withNetwork = ApprovalCallback.make(() => Effect.succeed("allowed-once" as const), {
        askNetwork: (asked) => Effect.succeed(asked.names.length > 1 ? "allowed-for-session" as const : "maybe" as never)
      })
      expect(yield* withNetwork.requestNetwork!(request)).toBe("allowed-for-session")
      expect(yield* withNetwork.requestNetwork!({ ...request, names: ["a.test"] })).toBe("cancelled")
      expect(ApprovalCallback.make(() => Effect.succeed("allowed-once" as const)).requestNetwork).toBeUndefined()
    }))
})
