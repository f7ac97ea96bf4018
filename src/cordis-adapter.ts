/**
 * effect-bash as a Cordis 4 plugin (`effect-bash/cordis`): `ctx.bash`, `ctx.bashEnv`, `ctx.tasks`, and
 * the `bash` and task tools in the host's harness registry. The plugin lives in `src/cordis/`.
 *
 * ```ts
 * import EffectBash from "effect-bash/cordis"
 * await ctx.plugin(EffectBash, { timeoutMs: 60_000 })
 * const result = await ctx.bash.run(ctx.bash.resolve({ command: "echo hi" }))
 * ```
 *
 * @since 0.1.0
 */
export * from "./cordis/plugin.js"
export { default } from "./cordis/plugin.js"
