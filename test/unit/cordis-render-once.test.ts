/**
 * Under Cordis a result is rendered once: our tool call renders it, and the harness registry's
 * `render` takes that text for the live call instead of rendering the value again; replays render
 * from the stored value. Our definition in a real `ToolRuntime`, over the scripted executor.
 */
import { Context } from "@deepseek-ai/cordis"
import { SystemPrompt } from "@deepseek-ai/dsh-system-prompt"
import ToolRuntime from "@deepseek-ai/dsh-tools"
import { Layer, ManagedRuntime } from "effect"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { HarnessCalls } from "../../src/cordis/deepseek/HarnessCalls.js"
import { toHarnessTool } from "../../src/cordis/deepseek/harnessTools.js"
import * as BashEnvRegistryLive from "../../src/layers/BashEnvRegistryLive.js"
import { AgentTools } from "../../src/services/AgentTools.js"
import * as ScriptedBashExecutor from "../../src/testing/ScriptedBashExecutor.js"
import { abortOnSignal } from "../../src/tool/abortable.js"
import * as AgentToolsLive from "../../src/tool/AgentToolsLive.js"

let root: Context
const runtime = () =>
  ManagedRuntime.make(
    AgentToolsLive.layer().pipe(Layer.provideMerge(Layer.mergeAll(ScriptedBashExecutor.layer(), BashEnvRegistryLive.layer())))
  )
let managed: ReturnType<typeof runtime>

beforeEach(async () => {
  root = new Context()
  await root.plugin(SystemPrompt)
  await root.plugin(ToolRuntime)
  managed = runtime()
})
afterEach(() => managed.dispose())

describe("a Cordis result is rendered once", () => {
  it("the registry shows the text the call rendered; a replay renders the stored value", async () => {
    const tools = await managed.runPromise(AgentTools)
    const bash = tools.tools.find((descriptor) => descriptor.name === "bash")!
    const renders: Array<unknown> = []
    const counted: AgentTools.Descriptor = { ...bash, render: (value) => (renders.push(value), bash.render(value)) }
    const definition = toHarnessTool(
      counted,
      (name, args, call, signal) => managed.runPromise(abortOnSignal(tools.callUnknown(name, args, call), signal)),
      new HarnessCalls()
    )
    root.tools.register(definition as never)
    const args = { command: "echo hi", description: "Print a greeting" }
    const result = await root.tools.execute({
      callId: "call-1" as never,
      name: "bash",
      arguments: args,
      signal: new AbortController().signal
    })
    expect(result).toMatchObject({ isError: false, content: [{ type: "text", text: "echo hi\n" }] })
    expect(renders).toEqual([])
    const replayed = definition.output.render({ ...args }, result.isError ? undefined : result.value)
    expect(replayed).toEqual([{ type: "text", text: "echo hi\n" }])
    expect(renders).toHaveLength(1)
  })
})
