/**
 * When the spawner's helpers (the host-death reaper, and the `posix_spawn` binding) start. Not
 * exported by an entry point: the CLI's MCP server uses it, so that it answers its client's
 * `initialize` before it starts them.
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
 * Builds `self` with the helpers of every spawner layer in it (the host-death reaper, and the
 * `posix_spawn` binding) started once `ready` completes, or at the first spawn if that comes first,
 * instead of with the layer: a host that must answer something before it runs any command (an MCP
 * server its client's `initialize`) does not start them first. Every spawn still awaits them.
 */
export const startHelpersAfter =
  (ready: Effect.Effect<void>) => <A, E, R>(self: Layer.Layer<A, E, R>): Layer.Layer<A, E, R> =>
    Layer.locally(self, helpersWaitFor, Option.some(ready))
