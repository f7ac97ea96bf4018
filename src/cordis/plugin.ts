/**
 * effect-bash as a Cordis 4 plugin (`effect-bash/cordis`). It provides `ctx.bash` (the reference
 * executor seam: synchronous `resolve`/`start`/`ownerOf` and process handles, `run` a Promise),
 * `ctx.bashEnv` (the managed environment; registrations belong to the registering plugin) and
 * `ctx.tasks` (background tasks), and — when the host has a harness tool registry — registers `bash`,
 * `task_output`, `task_list`, `task_kill` and the `tool:bash` prompt section, following that registry
 * and prompt service as they come and go, and delivers completion notices to the owning agent.
 *
 * Nothing is imported from Cordis: the host is typed structurally, so the plugin runs under upstream
 * `cordis` 4 and the harness's fork alike.
 *
 * ```ts
 * import EffectBash from "effect-bash/cordis"
 * await ctx.plugin(EffectBash, { timeoutMs: 60_000 })
 * const result = await ctx.bash.run(ctx.bash.resolve({ command: "echo hi" }))
 * ```
 */
import * as Effect from "effect/Effect"
import * as ManagedRuntime from "effect/ManagedRuntime"
import { BashEnvRegistry } from "../services/BashEnvRegistry.js"
import { BashExecutor } from "../services/BashExecutor.js"
import { SandboxSessions, sandboxPolicyContext } from "../services/SandboxSessions.js"
import { Tasks } from "../services/Tasks.js"
import { AgentTools } from "../services/AgentTools.js"
import { CompletionNotices } from "../services/CompletionNotices.js"
import { BashEnvFacade } from "./BashEnvFacade.js"
import { makeBashFacade } from "./BashFacade.js"
import { makeCallRunner } from "./CallRunner.js"
import type { EffectBashConfig } from "./config.js"
import { Config } from "./config.js"
import { HarnessCalls, sessionOf } from "./HarnessCalls.js"
import { startHarnessNotices } from "./harnessNotices.js"
import { toHarnessTool } from "./harnessTools.js"
import type { CordisContext, HarnessSystemPrompt, HarnessToolRuntime } from "./host.js"
import { hostLookup } from "./hostLayers.js"
import { cordisStackLayer } from "./stack.js"
import { makeTasksFacade } from "./TasksFacade.js"
import { abortedCallResult } from "../tool/abortable.js"

export type { CordisBash, CordisBashProcess, CordisBashSpec } from "./BashFacade.js"
export { RunnerClosedError, SynchronousCallError } from "./CallRunner.js"
export type { CordisBashEnv, CordisBashEnvContributor } from "./BashEnvFacade.js"
export type { EffectBashConfig } from "./config.js"
export type { CordisContext } from "./host.js"
export type { CordisTasks, CordisTaskWork } from "./TasksFacade.js"
export { Config }

/**
 * The plugin's name (its fiber and logger name).
 *
 * @since 0.1.0
 * @category constants
 */
export const name = "effect-bash"

/**
 * Required services: none. The harness tool registry (`tools`), prompt service (`systemPrompt`),
 * `approval` and `sessionPersistence` are optional and followed when present; a call's agent
 * (`exec.agent`) with `inject`/`followup` receives its tasks' completion notices.
 *
 * @since 0.1.0
 * @category constants
 */
export const inject: Array<string> = []

/**
 * Starts the plugin: builds the layer graph (rejecting with its error, e.g. a bad executor setting),
 * provides `ctx.bash`, `ctx.bashEnv`, `ctx.tasks`, and registers the tools while a registry is
 * present. On unload, in order: the tool and prompt registrations go, the services are withdrawn
 * (dependents unload first), calls in flight are interrupted, and the runtime is disposed — every
 * process killed and awaited, the spill directory removed — before `fiber.dispose()` resolves.
 *
 * @since 0.1.0
 * @category utils
 */
export const apply = async (ctx: CordisContext, config: EffectBashConfig = {}): Promise<void> => {
  await ctx.effect(async function*() {
    const calls = new HarnessCalls()
    const get = (service: string) => ctx.get(service)
    const managed = ManagedRuntime.make(cordisStackLayer(config, {
      approval: hostLookup(get, "approval", "request"),
      sessionPersistence: hostLookup(get, "sessionPersistence", "locate"),
      calls
    }))
    let shutdown = (): Promise<void> => managed.dispose()
    yield () => shutdown()
    const runner = await makeCallRunner(managed)
    shutdown = runner.shutdown
    const { executor, notices, registry, sessions, tasks, tools } = runner.runSync(
      Effect.all({
        executor: BashExecutor,
        notices: CompletionNotices,
        registry: BashEnvRegistry,
        sessions: SandboxSessions,
        tasks: Tasks,
        tools: AgentTools
      })
    )

    // The seam's start answers synchronously: let set-up work (the sandbox runner's probe) finish first.
    if (executor.ready !== undefined) await runner.run(executor.ready)
    yield ctx.provide("bash", makeBashFacade(executor, runner))
    yield ctx.provide("bashEnv", new BashEnvFacade(ctx, registry, runner))
    yield ctx.provide("tasks", makeTasksFacade(tasks, runner))
    if (config.registerTools === false) return

    const invoke = (toolName: string, args: unknown, call: AgentTools.CallContext, signal: AbortSignal) =>
      runner.runUntil(tools.callUnknown(toolName, args, call), signal, abortedCallResult)
    const harnessNotices = startHarnessNotices(ctx, {
      plugin: name,
      mode: config.completionDelivery ?? "wakeup",
      runner,
      calls,
      notices,
      background: config.enableRunInBackground !== false
    })

    // Child fibers: each (re)registers whenever its host service appears, and is undone with it.
    const effectBashTools = (scoped: CordisContext) => {
      const toolRuntime = scoped.get("tools") as HarnessToolRuntime
      for (const descriptor of tools.tools) toolRuntime.register(toHarnessTool(descriptor, invoke, calls))
    }
    const effectBashPrompt = (scoped: CordisContext) => {
      const prompt = scoped.get("systemPrompt") as HarnessSystemPrompt
      for (const section of tools.promptSections) {
        prompt.section(section.name === "tool:bash" ? { ...section, text: harnessNotices.promptText } : section)
      }
      // The sandbox policy of the assembling agent's session: its standing mode can change between turns.
      if (executor.sandboxMode !== undefined && prompt.context !== undefined) {
        prompt.context({
          ...sandboxPolicyContext,
          text: (assembly) => sessions.policyText(sessionOf(assembly.agent)) ?? ""
        })
      }
    }
    yield ctx.inject(["tools"], effectBashTools).dispose
    yield ctx.inject(["systemPrompt"], effectBashPrompt).dispose
    for (const dispose of harnessNotices.disposers) yield dispose
  }, "effect-bash")
}

/**
 * The plugin object: `ctx.plugin(EffectBash, config)`.
 *
 * @since 0.1.0
 * @category constants
 */
export const EffectBash = { name, Config, inject, apply } as const

export default EffectBash
