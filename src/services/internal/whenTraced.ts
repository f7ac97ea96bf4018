/**
 * Spans that cost nothing when nobody reads them: Effect's built-in tracer keeps spans in memory
 * only, so while it is the current tracer an operation runs untraced, without the span and the
 * stack capture `Effect.fn` makes on every call.
 *
 * @internal
 */
import type * as Tracer from "effect/Tracer"
import * as Effect from "effect/Effect"
import type { YieldWrap } from "effect/Utils"

let builtIn: Tracer.Tracer | undefined

/**
 * `traced` when a tracer is installed, else `untraced` (the same operation without its span).
 */
export const whenTraced = <Args extends ReadonlyArray<unknown>, A, E, R>(
  traced: (...args: Args) => Effect.Effect<A, E, R>,
  untraced: (...args: Args) => Effect.Effect<A, E, R>
) =>
(...args: Args): Effect.Effect<A, E, R> =>
  Effect.tracerWith((tracer) => (tracer === (builtIn ??= Effect.runSync(Effect.tracer)) ? untraced : traced)(...args))

/**
 * `Effect.fn(name)(body)` when a tracer is installed, else `Effect.fnUntraced(body)`: the one
 * generator body, spanned only when someone reads spans.
 */
export const fnWhenTraced = (name: string) =>
<Eff extends YieldWrap<Effect.Effect<any, any, any>>, AEff, Args extends Array<any>>(
  body: (...args: Args) => Generator<Eff, AEff, never>
) => whenTraced(Effect.fn(name)(body), Effect.fnUntraced(body))
