/**
 * The generic Cordis 4 plugin. It provides `ctx.bash` (the reference executor seam: synchronous
 * `resolve`/`start`/`ownerOf` and process handles, `run` a Promise), `ctx.bashEnv` (the managed
 * environment; registrations belong to the registering plugin) and `ctx.tasks` (background tasks) on
 * any Cordis 4 host; a {@link HarnessAdapter} fits it to one harness (its tool registry, prompt,
 * agents, approval and session services). It imports no adapter: `src/cordis-adapter.ts` composes it
 * with the DeepSeek harness's.
 *
 * Nothing is imported from Cordis: the host is typed structurally, so the plugin runs under upstream
 * `cordis` 4 and the harness's fork alike.
 */
import * as Effect from "effect/Effect"
import * as ManagedRuntime from "effect/ManagedRuntime"
import * as Option from "effect/Option"
import { BashEnvRegistry } from "../services/BashEnvRegistry.js"
import { BashExecutor } from "../services/BashExecutor.js"
import { SandboxSessions } from "../services/SandboxSessions.js"
import { Tasks } from "../services/Tasks.js"
import { Terminals } from "../services/Terminals.js"
import type { ToolSession } from "../services/ToolExecution.js"
import { AgentTools } from "../services/AgentTools.js"
import { CompletionNotices } from "../services/CompletionNotices.js"
import { BashEnvFacade } from "./BashEnvFacade.js"
import { makeBashFacade } from "./BashFacade.js"
import { makeCallRunner } from "./CallRunner.js"
import type { PluginConfig } from "./config.js"
import type { HarnessAdapter } from "./HarnessAdapter.js"
import type { CordisContext } from "./host.js"
import { cordisStackLayer } from "./stack.js"
import { makeTasksFacade } from "./TasksFacade.js"
import { makeTerminalsFacade } from "./TerminalsFacade.js"

/** Without a harness's mapping, a terminal's owner is a session id. */
const sessionIdOwner = (owner: unknown): ToolSession | undefined =>
  typeof owner === "string" && owner !== "" ? { id: owner } : undefined

/**
 * The plugin's name (its fiber and logger name).
 *
 * @since 0.1.0
 * @category constants
 */
export const name = "effect-bash"

/**
 * The plugin's `apply` with `harness` fitted in: builds the layer graph (rejecting with its error,
 * e.g. a bad executor setting), provides `ctx.bash`, `ctx.bashEnv`, `ctx.tasks` (and `ctx.terminals`
 * when the config turns terminals on), then attaches the
 * harness side unless `registerTools` is false. On unload, in order: the harness side goes, the
 * services are withdrawn (dependents unload first), calls in flight are interrupted, and the runtime
 * is disposed — every process killed and awaited, the spill directory removed — before
 * `fiber.dispose()` resolves.
 */
export const makeApply = <C extends PluginConfig>(harness: HarnessAdapter<C>) =>
async (ctx: CordisContext, given?: C): Promise<void> => {
  // Every field of the config is optional (Cordis loads a plugin without one as with `{}`).
  const config = given ?? ({} as C)
  await ctx.effect(async function*() {
    const instance = harness(ctx)
    const managed = ManagedRuntime.make(cordisStackLayer(config, instance.services))
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
    const terminals = runner.runSync(Effect.serviceOption(Terminals))
    if (Option.isSome(terminals)) {
      yield ctx.provide(
        "terminals",
        makeTerminalsFacade(terminals.value, registry, runner, instance.terminalOwner ?? sessionIdOwner)
      )
    }
    if (config.registerTools === false) return
    for (const dispose of instance.attach({ name, config, runner, executor, notices, sessions, tools })) yield dispose
  }, "effect-bash")
}
