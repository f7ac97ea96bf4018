/**
 * A scripted {@link Approval} channel for tests: it answers from a list and remembers what it was asked.
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Ref from "effect/Ref"
import { Approval } from "../services/Approval.js"

interface Script {
  readonly remaining: ReadonlyArray<Approval.Outcome>
  readonly asked: ReadonlyArray<Approval.Request>
}

/**
 * What a scripted approval channel was asked; provided beside {@link Approval} by
 * {@link layer}.
 *
 * @since 0.1.0
 * @category tags
 */
export class ApprovalScripted extends Context.Tag("effect-bash/ApprovalScripted")<
  ApprovalScripted,
  {
    /** Every request received, oldest first. */
    readonly requests: Effect.Effect<ReadonlyArray<Approval.Request>>
    /** The scripted outcomes not yet given. */
    readonly remaining: Effect.Effect<ReadonlyArray<Approval.Outcome>>
  }
>() {}

/**
 * Answers requests with `outcomes` in order, then `unavailable` once the script runs out; records
 * every request, answered or not.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (outcomes: ReadonlyArray<Approval.Outcome>): Layer.Layer<Approval | ApprovalScripted> =>
  Layer.effectContext(
    Effect.gen(function*() {
      const script = yield* Ref.make<Script>({ remaining: [...outcomes], asked: [] })
      const request = Effect.fn("Approval.request")(function*(request: Approval.Request) {
        return yield* Ref.modify(script, ({ asked, remaining }): readonly [Approval.Outcome, Script] => [
          remaining[0] ?? "unavailable",
          { remaining: remaining.slice(1), asked: [...asked, request] }
        ])
      })
      return Context.make(Approval, Approval.of({ request })).pipe(
        Context.add(ApprovalScripted, {
          requests: Effect.map(Ref.get(script), ({ asked }) => asked),
          remaining: Effect.map(Ref.get(script), ({ remaining }) => remaining)
        })
      )
    })
  )
