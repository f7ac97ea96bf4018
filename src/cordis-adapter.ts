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
 *
 * @since 0.1.0
 */
import { Effect, ManagedRuntime, Stream } from "effect"
import { BashEnvRegistry } from "./services/BashEnvRegistry.js"
import { BashExecutor } from "./services/BashExecutor.js"
import { Tasks } from "./services/Tasks.js"
import type { ToolCallContext } from "./tool/AgentTools.js"
import { AgentTools } from "./tool/AgentTools.js"
import { CompletionNotices } from "./tool/CompletionNotices.js"
import { bashPromptText } from "./tool/descriptions.js"
import { BashEnvFacade } from "./cordis/BashEnvFacade.js"
import { makeBashFacade } from "./cordis/BashFacade.js"
import { makeCallRunner } from "./cordis/CallRunner.js"
import type { EffectBashConfig } from "./cordis/config.js"
import { Config } from "./cordis/config.js"
import { HarnessCalls, sessionOf } from "./cordis/HarnessCalls.js"
import { toHarnessTool } from "./cordis/harnessTools.js"
import type {
  CordisContext,
  HarnessAgent,
  HarnessAssembleContext,
  HarnessSystemPrompt,
  HarnessToolRuntime
} from "./cordis/host.js"
import { hostLookup } from "./cordis/hostLayers.js"
import { NoticeDelivery, noticeTargetOf } from "./cordis/NoticeDelivery.js"
import { cordisStackLayer } from "./cordis/stack.js"
import { makeTasksFacade } from "./cordis/TasksFacade.js"

export type { CordisBash, CordisBashProcess } from "./cordis/BashFacade.js"
export { RunnerClosedError } from "./cordis/CallRunner.js"
export type { CordisBashEnv, CordisBashEnvContributor } from "./cordis/BashEnvFacade.js"
export type { EffectBashConfig } from "./cordis/config.js"
export type { CordisContext } from "./cordis/host.js"
export type { CordisTasks, CordisTaskWork } from "./cordis/TasksFacade.js"
export { Config }

/**
 * The plugin's name (its fiber and logger name).
 *
 * @since 0.1.0
 */
export const name = "effect-bash"

/**
 * Required services: none. The harness tool registry (`tools`), prompt service (`systemPrompt`),
 * `approval` and `sessionPersistence` are optional and followed when present; a call's agent
 * (`exec.agent`) with `inject`/`followup` receives its tasks' completion notices.
 *
 * @since 0.1.0
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
    const { executor, notices, registry, tasks, tools } = runner.runSync(
      Effect.all({
        executor: BashExecutor,
        notices: CompletionNotices,
        registry: BashEnvRegistry,
        tasks: Tasks,
        tools: AgentTools
      })
    )

    yield ctx.provide("bash", makeBashFacade(executor, runner))
    yield ctx.provide("bashEnv", new BashEnvFacade(ctx, registry, runner))
    yield ctx.provide("tasks", makeTasksFacade(tasks, runner))
    if (config.registerTools === false) return

    const invoke = (toolName: string, args: unknown, call: ToolCallContext) =>
      runner.run(tools.execute(toolName, args, call))
    const delivery = new NoticeDelivery({
      mode: config.completionDelivery ?? "wakeup",
      plugin: name,
      take: (session) => runner.runSync(notices.take(session)),
      busy: (session) => calls.busy(session),
      // Never throws: it may run at the end of a call, whose result must stand.
      report: (error) => runner.readSync(Effect.logWarning("effect-bash: a completion notice was not delivered", error))
    })
    calls.observe({ started: (session, agent) => delivery.track(session, agent), settled: (session) => delivery.flush(session) })
    // Ends with the runtime (interrupted as a call in flight at unload).
    runner.run(Stream.runForEach(notices.arrivals, (session) => Effect.sync(() => delivery.flush(session))))
      .catch(() => undefined)
    const backgroundTasks = config.enableRunInBackground !== false
    const promptText = (context: HarnessAssembleContext | undefined) =>
      bashPromptText({
        notices: backgroundTasks && noticeTargetOf(context?.agent) !== undefined && sessionOf(context?.agent) !== undefined
      })

    // Child fibers: each (re)registers whenever its host service appears, and is undone with it.
    const effectBashTools = (scoped: CordisContext) => {
      const toolRuntime = scoped.get("tools") as HarnessToolRuntime
      for (const descriptor of tools.tools) toolRuntime.register(toHarnessTool(descriptor, invoke, calls))
    }
    const effectBashPrompt = (scoped: CordisContext) => {
      const prompt = scoped.get("systemPrompt") as HarnessSystemPrompt
      for (const section of tools.promptSections) {
        prompt.section(section.name === "tool:bash" ? { ...section, text: promptText } : section)
      }
    }
    yield ctx.inject(["tools"], effectBashTools).dispose
    yield ctx.inject(["systemPrompt"], effectBashPrompt).dispose
    // A user-authored message refills its owner's wake budget; a disposed agent gets nothing more.
    yield ctx.on("agent/inbox/claimed", (payload: { readonly agent?: HarnessAgent; readonly message?: unknown }) => {
      const session = sessionOf(payload.agent)
      if (session !== undefined && isUserAuthored(payload.message)) delivery.userInput(session.id)
    })
    yield ctx.on("agent/disposed", (payload: { readonly agent?: unknown }) => delivery.forget(payload.agent))
    // Disposed first: an unloading plugin delivers nothing.
    yield () => delivery.close()
  }, "effect-bash")
}

const isUserAuthored = (message: unknown): boolean =>
  typeof message === "object" && message !== null &&
  (message as { readonly source?: { readonly kind?: unknown } }).source?.kind === "user"

/**
 * The plugin object: `ctx.plugin(EffectBash, config)`.
 *
 * @since 0.1.0
 */
export const EffectBash = { name, Config, inject, apply } as const

export default EffectBash
