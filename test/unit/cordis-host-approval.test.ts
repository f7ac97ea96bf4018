/**
 * Sandbox escalation through the harness's approval service: our tool definitions registered in a
 * real `ToolRuntime`, over a confining executor double, with `Approval` backed by a host `approval`
 * service that answers for the agent of the call in flight.
 */
import { Context } from "@deepseek-ai/cordis"
import { SystemPrompt } from "@deepseek-ai/dsh-system-prompt"
import ToolRuntime from "@deepseek-ai/dsh-tools"
import { Effect, Layer, ManagedRuntime } from "effect"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { HarnessCalls } from "../../src/cordis/deepseek/HarnessCalls.js"
import { toHarnessTool } from "../../src/cordis/deepseek/harnessTools.js"
import type { HostApproval } from "../../src/cordis/deepseek/harness.js"
import { hostApprovalLayer, hostLookup } from "../../src/cordis/deepseek/hostLayers.js"
import * as BashEnvRegistryLive from "../../src/layers/BashEnvRegistryLive.js"
import * as FakeConfiningExecutor from "../../src/testing/FakeConfiningExecutor.js"
import { AgentTools } from "../../src/services/AgentTools.js"
import * as AgentToolsLive from "../../src/tool/AgentToolsLive.js"

type Asked = Parameters<HostApproval["request"]>[0]

let root: Context
let runtime: ReturnType<typeof makeRuntime>
let asked: Array<Asked>

const makeRuntime = (calls: HarnessCalls) =>
  ManagedRuntime.make(
    AgentToolsLive.layer().pipe(
      Layer.provideMerge(Layer.mergeAll(FakeConfiningExecutor.layer(), BashEnvRegistryLive.layer())),
      Layer.provide(hostApprovalLayer(hostLookup<HostApproval>((name) => root.get(name), "approval", "request"), calls))
    )
  )

const agent = { session: { header: { id: "s1", cwd: "/work" } } }
const command = "echo hi > /etc/motd"

const provideApproval = (answer: string) =>
  root.plugin({
    name: "host-approval",
    apply: (ctx: Context) => {
      ctx.provide("approval", {
        request: async (request: Asked) => {
          asked.push(request)
          return answer
        }
      })
    }
  })

const escalate = async (justification = "The file lives outside the workspace.") => {
  const result = await root.tools.execute({
    callId: "call-1" as never,
    name: "bash",
    arguments: {
      command,
      description: "write the message of the day",
      sandbox_permissions: "danger-full-access",
      justification
    },
    signal: new AbortController().signal,
    agent: agent as never
  })
  const [block] = result.content
  return { isError: result.isError, text: block?.type === "text" ? block.text : "" }
}

const executedCommands = () =>
  runtime.runPromise(Effect.flatMap(FakeConfiningExecutor.FakeConfiningExecutor, (fake) => fake.calls)).then((calls) =>
    calls.map((call) => call.spec.command)
  )

beforeEach(async () => {
  asked = []
  root = new Context()
  await root.plugin(SystemPrompt)
  await root.plugin(ToolRuntime)
  const calls = new HarnessCalls()
  runtime = makeRuntime(calls)
  const tools = await runtime.runPromise(AgentTools)
  const bash = tools.tools.find((descriptor) => descriptor.name === "bash")!
  // Our definition is typed structurally; the registry's own type is stricter about optional members.
  root.tools.register(
    toHarnessTool(bash, (name, args, call) => runtime.runPromise(tools.callUnknown(name, args, call)), calls) as never
  )
})
afterEach(() => runtime.dispose())

describe("escalation through the host's approval service", () => {
  it("asks for the calling agent, with the command and the justification, and runs once allowed", async () => {
    await provideApproval("allowed-once")
    expect(await escalate()).toEqual({ isError: false, text: "(no output)" })
    expect(asked).toEqual([{
      agent,
      toolName: "bash",
      callId: "call-1",
      reason: `Run this command with danger-full-access access: ${command}\nWorking directory: ${agent.session.header.cwd}\nRuns: in the foreground, stopped after 120000 ms\nReason: The file lives outside the workspace.`,
      signal: expect.any(AbortSignal)
    }])
    expect(await executedCommands()).toEqual([command])
  })

  it("shows the justification as the CLI and MCP questions do: invisible and bidi characters escaped", async () => {
    await provideApproval("rejected")
    await escalate("Harmless\u202E\u200B fix")
    expect(asked.map((request) => request.reason?.split("\n").at(-1))).toEqual(["Reason: Harmless\\u{202E}\\u{200B} fix"])
  })

  it("runs nothing when the user rejects", async () => {
    await provideApproval("rejected")
    expect(await escalate()).toEqual({
      isError: true,
      text: `Error: the user rejected escalating this command to "danger-full-access"`
    })
    expect(await executedCommands()).toEqual([])
  })

  it("runs nothing while the host has no approval service", async () => {
    expect(await escalate()).toEqual({
      isError: true,
      text: `Error: sandbox escalation to "danger-full-access" requires approval, but no approval channel is available`
    })
    expect(asked).toEqual([])
    expect(await executedCommands()).toEqual([])
  })
})
