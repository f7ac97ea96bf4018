/**
 * The host's own environment changed for one effect: what the code under test reads from
 * `process.env` (the executor per spawn, the container engine per layer).
 */
import { Effect } from "effect"

/** Runs `effect` with each of `variables` set (unset where `undefined`), each as it was again afterwards. */
export const withHostEnv = (variables: Readonly<Record<string, string | undefined>>) =>
<A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Effect.acquireUseRelease(
    Effect.sync(() => {
      const saved = Object.fromEntries(Object.keys(variables).map((name) => [name, process.env[name]]))
      setAll(variables)
      return saved
    }),
    () => effect,
    (saved) => Effect.sync(() => setAll(saved))
  )

const setAll = (variables: Readonly<Record<string, string | undefined>>) => {
  for (const [name, value] of Object.entries(variables)) {
    if (value === undefined) delete process.env[name]
    else process.env[name] = value
  }
}
