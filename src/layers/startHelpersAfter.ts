/**
 * When the spawner's helper processes (the host-death reaper and the launcher) start. Not exported by
 * an entry point: the CLI's MCP server uses it, so that it answers its client's `initialize` before
 * it forks them.
 *
 * @internal
 */
import type * as Effect from "effect/Effect"
import * as FiberRef from "effect/FiberRef"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"

/** What the helper processes of a spawner layer built now wait for; none: they start with the layer. */
export const helpersWaitFor = FiberRef.unsafeMake<Option.Option<Effect.Effect<void>>>(Option.none())

/**
 * Builds `self` with the helper processes of every spawner layer in it (the host-death reaper and
 * the launcher) started once `ready` completes, or at the first spawn if that comes first, instead
 * of with the layer: a host that must answer something before it runs any command (an MCP server
 * its client's `initialize`) does not fork them first. Every spawn still awaits them (the launcher of
 * `NodeProcessSpawner.layerLauncherOnDemand` is no helper: it starts after a command).
 */
export const startHelpersAfter =
  (ready: Effect.Effect<void>) => <A, E, R>(self: Layer.Layer<A, E, R>): Layer.Layer<A, E, R> =>
    Layer.locally(self, helpersWaitFor, Option.some(ready))
