/**
 * The parts of a Cordis 4 host the adapter touches, typed structurally: the adapter imports nothing
 * from Cordis or the harness at runtime, so it loads under upstream `cordis` and the harness's fork
 * alike (and the upstream `.d.ts` files do not type-check under `nodenext` anyway).
 */

/**
 * A cleanup Cordis runs when an effect or fiber unloads; it may be async.
 */
export type CordisDisposable = () => unknown

/**
 * A plugin's running instance, as `ctx.plugin()` / `ctx.inject()` return it.
 */
export interface CordisFiber {
  /** Unloads the plugin; settles once its cleanups (and child plugins) have finished. */
  readonly dispose: () => Promise<void>
}

/**
 * A Cordis context, as far as the adapter uses it.
 *
 * @since 0.1.0
 * @category models
 */
export interface CordisContext {
  /** Registers a cleanup-aware effect on the calling fiber; the returned disposer is awaitable. */
  effect(execute: () => unknown, label?: string): CordisDisposable & PromiseLike<unknown>
  /** Publishes a service owned by the calling fiber; fails when the name is already provided. */
  provide(name: string, value: unknown): CordisDisposable
  /** Reads a service without requiring it (`undefined` when absent). */
  get(name: string): unknown
  /** Runs `callback` in a child fiber while every named service is present. */
  inject(deps: Array<string>, callback: (ctx: CordisContext) => unknown): CordisFiber
  /**
   * The service registry behind `get` (`ctx.get` is its mixin): the same read, without the context
   * proxy's work on every access.
   */
  readonly reflect?: { readonly get: (name: string) => unknown }
}

/**
 * Event listening, which every Cordis 4 context has. It is kept out of {@link CordisContext}: each
 * Cordis line types `on` over its own closed set of event names, which no structural type accepts.
 */
export interface CordisEvents {
  /** Listens to an event for the lifetime of the calling fiber; returns the disposer. */
  on(name: string, listener: (payload: never) => unknown): CordisDisposable
}

/**
 * The marker Cordis reads to hand a service's methods the *caller's* context as `this.ctx`
 * (both Cordis lines use this global symbol).
 */
export const cordisTracker: unique symbol = Symbol.for("cordis.tracker")
