/**
 * `ctx.bashEnv`: the managed-environment registry. `register` and `list` answer at once; `collect`,
 * which runs contributors, is a Promise. A registration belongs to the plugin that made it: Cordis
 * hands this service the caller's context, the registration lives in a `Scope` opened for it, and
 * that scope closes when the caller's fiber unloads (or when the returned disposer is called).
 */
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Scope from "effect/Scope"
import type { BashEnvRegistry } from "../services/BashEnvRegistry.js"
import type { ToolExecution } from "../services/ToolExecution.js"
import type { CallRunner } from "./CallRunner.js"
import type { CordisContext, CordisDisposable } from "./host.js"
import { cordisTracker } from "./host.js"

/**
 * A contributor as a plugin writes it: `resolve` may return a value or a Promise.
 *
 * @since 0.1.0
 * @category models
 */
export interface CordisBashEnvContributor {
  readonly name: string
  readonly keys: ReadonlyArray<BashEnvRegistry.Key>
  resolve(execution: ToolExecution): Readonly<Record<string, unknown>> | Promise<Readonly<Record<string, unknown>>>
}

/**
 * The `ctx.bashEnv` service.
 *
 * @since 0.1.0
 * @category models
 */
export interface CordisBashEnv {
  /**
   * Registers for the lifetime of the calling plugin; throws the contract error (`bash env contributor
   * "<n>" is already registered`, …). The returned disposer removes it earlier.
   */
  register(contributor: CordisBashEnvContributor): CordisDisposable
  /** The frozen managed environment of one call. */
  collect(execution: ToolExecution): Promise<Readonly<Record<string, string>>>
  /** Every declaration sorted by key; runs no contributor (so it answers at once). */
  list(): ReadonlyArray<BashEnvRegistry.Declaration>
}

/**
 * The `ctx.bashEnv` service object. Its methods read `this.ctx`, which Cordis rebinds to the
 * calling plugin's context (so it must stay a class with prototype methods, not closures).
 */
export class BashEnvFacade implements CordisBashEnv {
  readonly [cordisTracker] = { associate: "bashEnv", property: "ctx" }

  constructor(
    readonly ctx: CordisContext,
    private readonly registry: BashEnvRegistry["Type"],
    private readonly runner: CallRunner<never>
  ) {}

  register(contributor: CordisBashEnvContributor): CordisDisposable {
    const { registry, runner } = this
    return this.ctx.effect(() => {
      const scope = runner.runSync(Scope.make())
      const registered = runner.runSync(
        Effect.exit(
          Scope.extend(
            registry.register({
              name: contributor.name,
              keys: contributor.keys,
              resolve: (execution) => Effect.promise(async () => contributor.resolve(execution))
            }),
            scope
          )
        )
      )
      if (Exit.isFailure(registered)) {
        runner.runSync(Scope.close(scope, Exit.void))
        throw Cause.squash(registered.cause)
      }
      // After the plugin unloaded the registry is gone with its registrations; nothing to undo then.
      return () => runner.run(Scope.close(scope, Exit.void)).catch(() => undefined)
    }, `bashEnv.register(${JSON.stringify(contributor.name)})`)
  }

  collect(execution: ToolExecution): Promise<Readonly<Record<string, string>>> {
    return this.runner.run(this.registry.collect(execution))
  }

  list(): ReadonlyArray<BashEnvRegistry.Declaration> {
    return this.runner.runSync(this.registry.list)
  }
}
