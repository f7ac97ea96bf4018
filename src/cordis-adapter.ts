/**
 * effect-bash as a Cordis 4 plugin (`effect-bash/cordis`): `ctx.bash`, `ctx.bashEnv`, `ctx.tasks`, and
 * the `bash` and task tools in the host's harness registry. The generic plugin lives in `src/cordis/`,
 * the DeepSeek harness adapter beside it in `src/cordis/deepseek/`; this entry composes the two.
 *
 * ```ts
 * import EffectBash from "effect-bash/cordis"
 * await ctx.plugin(EffectBash, { timeoutMs: 60_000 })
 * const result = await ctx.bash.run(ctx.bash.resolve({ command: "echo hi" }))
 * ```
 *
 * @since 0.1.0
 */
import { deepseekHarness } from "./cordis/deepseek/adapter.js"
import type { EffectBashConfig } from "./cordis/deepseek/config.js"
import { Config } from "./cordis/deepseek/config.js"
import type { CordisContext } from "./cordis/host.js"
import { makeApply, name } from "./cordis/plugin.js"

export type { CordisBash, CordisBashProcess, CordisBashSpec } from "./cordis/BashFacade.js"
export type { CordisBashEnv, CordisBashEnvContributor } from "./cordis/BashEnvFacade.js"
export { RunnerClosedError, SynchronousCallError } from "./cordis/CallRunner.js"
export { Config } from "./cordis/deepseek/config.js"
export type { EffectBashConfig } from "./cordis/deepseek/config.js"
export type { CordisContext } from "./cordis/host.js"
export { name } from "./cordis/plugin.js"
export type { CordisTasks, CordisTaskWork } from "./cordis/TasksFacade.js"
export { CordisTerminalError } from "./cordis/TerminalsFacade.js"
export type {
  CordisTerminalErrorCode,
  CordisTerminalReadResult,
  CordisTerminals,
  CordisTerminalSendOperation,
  CordisTerminalSendResult,
  CordisTerminalSnapshot
} from "./cordis/TerminalsFacade.js"

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
export const apply: (ctx: CordisContext, config?: EffectBashConfig) => Promise<void> = makeApply(deepseekHarness)

/**
 * The plugin object: `ctx.plugin(EffectBash, config)`.
 *
 * @since 0.1.0
 * @category constants
 */
export const EffectBash = { name, Config, inject, apply } as const

export default EffectBash
