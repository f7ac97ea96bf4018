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
  readonly networkRemaining: ReadonlyArray<Approval.NetworkOutcome>
  readonly networkAsked: ReadonlyArray<Approval.NetworkRequest>
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
    /**
     * Every network request received, oldest first.
     *
     * @since 0.2.0
     */
    readonly networkRequests: Effect.Effect<ReadonlyArray<Approval.NetworkRequest>>
  }
>() {}

/**
 * Answers requests with `outcomes` in order, and network requests with `networkOutcomes` (since
 * 0.2.0), each then `unavailable` once its script runs out; records every request, answered or not.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (
  outcomes: ReadonlyArray<Approval.Outcome>,
  networkOutcomes: ReadonlyArray<Approval.NetworkOutcome> = []
): Layer.Layer<Approval | ApprovalScripted> =>
  Layer.effectContext(
    Effect.gen(function*() {
      const script = yield* Ref.make<Script>({
        remaining: [...outcomes],
        asked: [],
        networkRemaining: [...networkOutcomes],
        networkAsked: []
      })
      const request = Effect.fn("Approval.request")(function*(request: Approval.Request) {
        return yield* Ref.modify(script, (current): readonly [Approval.Outcome, Script] => [
          current.remaining[0] ?? "unavailable",
          { ...current, remaining: current.remaining.slice(1), asked: [...current.asked, request] }
        ])
      })
      const requestNetwork = Effect.fn("Approval.requestNetwork")(function*(request: Approval.NetworkRequest) {
        return yield* Ref.modify(script, (current): readonly [Approval.NetworkOutcome, Script] => [
          current.networkRemaining[0] ?? "unavailable",
          { ...current, networkRemaining: current.networkRemaining.slice(1), networkAsked: [...current.networkAsked, request] }
        ])
      })
      return Context.make(Approval, Approval.of({ request, requestNetwork })).pipe(
        Context.add(ApprovalScripted, {
          requests: Effect.map(Ref.get(script), ({ asked }) => asked),
          remaining: Effect.map(Ref.get(script), ({ remaining }) => remaining),
          networkRequests: Effect.map(Ref.get(script), ({ networkAsked }) => networkAsked)
        })
      )
    })
  )
