/**
 * Waiting on an `AbortSignal`, where one crosses into Effect: the executor's `signal` request field
 * (the reference seam's abort trigger) and the hosts that cancel a tool call with one.
 *
 * @internal
 */
import { Effect } from "effect"

/**
 * Completes when `signal` fires (at once if it already has).
 */
export const awaitAbort = (signal: AbortSignal): Effect.Effect<void> =>
  Effect.async<void>((resume) => {
    if (signal.aborted) return resume(Effect.void)
    const onAbort = () => resume(Effect.void)
    signal.addEventListener("abort", onAbort, { once: true })
    return Effect.sync(() => signal.removeEventListener("abort", onAbort))
  })
