/**
 * An {@link Approval} channel that asks the host: a UI prompt, a CLI question, a
 * harness's own approval service. Anything but a clear answer counts as `cancelled`.
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { Approval } from "../services/Approval.js"

/**
 * How a host answers one request. `signal` aborts when the request is no longer wanted (the call was
 * interrupted), so the host can withdraw its prompt.
 *
 * @since 0.1.0
 * @category models
 */
export type Ask = (
  request: Approval.Request,
  signal: AbortSignal
) => PromiseLike<Approval.Outcome> | Effect.Effect<Approval.Outcome, unknown>

/**
 * How a host answers one network request ({@link Approval.NetworkRequest}), as {@link Ask} does.
 *
 * @since 0.2.0
 * @category models
 */
export type AskNetwork = (
  request: Approval.NetworkRequest,
  signal: AbortSignal
) => PromiseLike<Approval.NetworkOutcome> | Effect.Effect<Approval.NetworkOutcome, unknown>

const outcomes: ReadonlySet<unknown> = new Set<Approval.Outcome>(["allowed-once", "rejected", "cancelled", "unavailable"])

const isOutcome = (value: unknown): value is Approval.Outcome => outcomes.has(value)

const isNetworkOutcome = (value: unknown): value is Approval.NetworkOutcome => isOutcome(value) || value === "allowed-for-session"

/** The host's raw answer: a thrown, rejected or failed ask fails here. */
const hostAnswer = <Request>(
  ask: (request: Request, signal: AbortSignal) => PromiseLike<unknown> | Effect.Effect<unknown, unknown>,
  request: Request
) =>
  Effect.async<unknown, unknown>((resume, signal) => {
    let reply: PromiseLike<unknown> | Effect.Effect<unknown, unknown>
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
 * Options of {@link layer}.
 *
 * @since 0.1.0
 * @category models
 */
export interface Options {
  /** How long a human may take (by the Clock); no answer by then counts as `cancelled`. Default: no limit. */
  readonly timeoutMs?: number
  /**
   * How the host answers network requests, under the same rules; without it the channel cannot grant
   * names (they are `unavailable`).
   *
   * @since 0.2.0
   */
  readonly askNetwork?: AskNetwork
}

/** `answer` as one outcome: bounded by `timeoutMs`, anything but a clear answer `cancelled`. */
const settle = <Outcome>(answer: Effect.Effect<unknown, unknown>, options: Options, isClear: (reply: unknown) => reply is Outcome) =>
  (options.timeoutMs === undefined
    ? answer
    : Effect.timeoutFail(answer, { duration: options.timeoutMs, onTimeout: () => "no answer in time" })).pipe(
      Effect.map((reply): Outcome | "cancelled" => (isClear(reply) ? reply : "cancelled")),
      Effect.catchAllCause(() => Effect.succeed("cancelled" as const))
    )

/**
 * Approval answered by a host callback: asks `ask` for every request. A throw, a rejection, a failure
 * or a self-interruption of the ask, an answer that is not an {@link Approval.Outcome}, or no answer
 * within `timeoutMs` (the ask's signal is then aborted so the host can withdraw its prompt) counts as
 * `cancelled`; interrupting the request itself is not swallowed (it aborts the signal and propagates).
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (ask: Ask, options: Options = {}): Approval["Type"] => {
  const askNetwork = options.askNetwork
  return Approval.of({
    request: Effect.fn("Approval.request")(function*(request: Approval.Request) {
      return yield* settle(hostAnswer(ask, request), options, isOutcome)
    }),
    ...(askNetwork === undefined ? {} : {
      requestNetwork: Effect.fn("Approval.requestNetwork")(function*(request: Approval.NetworkRequest) {
        return yield* settle(hostAnswer(askNetwork, request), options, isNetworkOutcome)
      })
    })
  })
}

/**
 * {@link Approval} answered by a host callback ({@link make}).
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (ask: Ask, options: Options = {}): Layer.Layer<Approval> =>
  Layer.succeed(Approval, make(ask, options))
