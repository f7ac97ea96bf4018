/**
 * The one bounded real-time poll of the process tests: what they wait for (a process gone, a line
 * printed) is outside any Clock, so they look again every few milliseconds, for at most a bound.
 */

/** Probes until `done` holds of the answer or `timeoutMs` has passed; returns the last answer. */
export const pollUntil = async <A>(
  probe: () => A | Promise<A>,
  done: (value: A) => boolean,
  timeoutMs: number,
  intervalMs = 20
): Promise<A> => {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const value = await probe()
    if (done(value) || Date.now() >= deadline) return value
    await new Promise((resolve) => setTimeout(resolve, intervalMs))
  }
}
