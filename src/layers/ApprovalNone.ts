/**
 * An {@link Approval} channel with nobody on the other end: every request is `unavailable`, so an
 * escalation never runs (CONTRACT §5).
 *
 * @since 0.1.0
 */
import { Effect, Layer } from "effect"
import { Approval } from "../services/Approval.js"

/**
 * Approval for compositions without a human: always `unavailable`.
 *
 * @since 0.1.0
 */
export const ApprovalNone = {
  /** Answers every request `unavailable`. */
  layer: Layer.succeed(
    Approval,
    Approval.of({
      request: () => Effect.succeed<Approval.Outcome>("unavailable").pipe(Effect.withSpan("Approval.request"))
    })
  )
}
