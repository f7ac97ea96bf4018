/**
 * An {@link Approval} channel that asks the host (CONTRACT §5): a UI prompt, a CLI question, a
 * harness's own approval service. Anything but a clear answer counts as `cancelled`.
 *
 * @since 0.1.0
 */
import { Effect, Layer } from "effect"
import type { ApprovalOutcome, ApprovalRequest } from "../services/Approval.js"
import { Approval } from "../services/Approval.js"

/**
 * How a host answers one request. `signal` aborts when the request is no longer wanted (the call was
 * interrupted), so the host can withdraw its prompt.
 *
 * @since 0.1.0
 */
export type ApprovalAsk = (
  request: ApprovalRequest,
  signal: AbortSignal
) => PromiseLike<ApprovalOutcome> | Effect.Effect<ApprovalOutcome, unknown>

const outcomes: ReadonlySet<unknown> = new Set<ApprovalOutcome>(["allowed-once", "rejected", "cancelled", "unavailable"])

const isOutcome = (value: unknown): value is ApprovalOutcome => outcomes.has(value)

/** The host's raw answer: a thrown, rejected or failed ask fails here. */
const hostAnswer = (ask: ApprovalAsk, request: ApprovalRequest) =>
  Effect.async<unknown, unknown>((resume, signal) => {
    let reply: ReturnType<ApprovalAsk>
    try {
      reply = ask(request, signal)
    } catch (error) {
      resume(Effect.fail(error))
      return
    }
    if (Effect.isEffect(reply)) {
      resume(reply)
      return
    }
    Promise.resolve(reply).then(
      (value) => resume(Effect.succeed(value)),
      (error: unknown) => resume(Effect.fail(error))
    )
  })

/**
 * Settings of {@link ApprovalCallback.layer}.
 *
 * @since 0.1.0
 */
export interface ApprovalCallbackOptions {
  /** How long a human may take (by the Clock); no answer by then counts as `cancelled`. Default: no limit. */
  readonly timeoutMs?: number
}

/**
 * Approval answered by a host callback.
 *
 * @since 0.1.0
 */
export const ApprovalCallback = {
  /**
   * Asks `ask` for every request. A throw, a rejection, a failure or a self-interruption of the ask,
   * an answer that is not an {@link ApprovalOutcome}, or no answer within `timeoutMs` (the ask's
   * signal is then aborted so the host can withdraw its prompt) counts as `cancelled`; interrupting
   * the request itself is not swallowed (it aborts the signal and propagates).
   */
  layer: (ask: ApprovalAsk, options: ApprovalCallbackOptions = {}): Layer.Layer<Approval> =>
    Layer.succeed(
      Approval,
      Approval.of({
        request: Effect.fn("Approval.request")(function*(request: ApprovalRequest) {
          const answer = hostAnswer(ask, request)
          const bounded = options.timeoutMs === undefined
            ? answer
            : Effect.timeoutFail(answer, { duration: options.timeoutMs, onTimeout: () => "no answer in time" })
          return yield* bounded.pipe(
            Effect.map((reply): ApprovalOutcome => (isOutcome(reply) ? reply : "cancelled")),
            Effect.catchAllCause(() => Effect.succeed<ApprovalOutcome>("cancelled"))
          )
        })
      })
    )
}
