/**
 * The runner's usability probe: `<runner> -- bash -c true` through the `ProcessSpawner`, supervised
 * as a call is (bounded in time on the Clock, killed through the kill path), started again after
 * each pause of {@link mountRacePausesMs} (on the Clock) while it fails with its dialect's mount race.
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import { ProcessSpawner } from "../../../services/ProcessSpawner.js"
import type { RunnerDialect } from "../executor/RunnerWatch.js"
import type { Collector } from "../executor/supervise.js"
import { supervise } from "../executor/supervise.js"

/**
 * The pauses before each new start of a probe that met a mount race. A host's mount table can change
 * for a while (a container engine starting or removing several containers), so the pauses grow.
 */
export const mountRacePausesMs: ReadonlyArray<number> = [100, 200, 400, 800]

/** Whether a probe's failure is its dialect's mount race, which a later start may not meet. */
export const metMountRace = (dialect: RunnerDialect, failure: string | undefined): boolean =>
  failure !== undefined && dialect.mountRacePrefix !== undefined && failure.startsWith(dialect.mountRacePrefix)

/** Keeps what a probe's stream says, as text: it is a few lines at most. */
const textCollector = (): Collector & { readonly text: () => string } => {
  const decoder = new TextDecoder()
  let text = ""
  return {
    offer: (chunk) => {
      text += decoder.decode(chunk, { stream: true })
      return undefined
    },
    finish: Effect.sync(() => ({ text, truncated: false })),
    text: () => text
  }
}

/**
 * One start of the probe, supervised as a call is (`supervise`): bounded by `timeoutMs`, its group
 * killed through the kill path on timeout or interruption (the layer closing).
 */
const probeOnce = (
  wrapper: ProcessSpawner.Wrapper,
  timeoutMs: number,
  graceMs: number
): Effect.Effect<string | undefined, never, ProcessSpawner> =>
  Effect.uninterruptibleMask((restore) =>
    Effect.gen(function*() {
      const spawner = yield* ProcessSpawner
      const process = yield* spawner.spawn({
        command: "true",
        cwd: "/",
        env: { PATH: globalThis.process.env.PATH ?? "/usr/bin:/bin" },
        wrapper
      })
      const stderr = textCollector()
      const stdout: Collector = { offer: () => undefined, finish: Effect.succeed({ text: "", truncated: false }) }
      const supervised = yield* supervise({ process, stdout, stderr, graceMs, timeoutMs, restore })
      if (supervised.cause === "timeout") return `it did not finish within ${timeoutMs}ms`
      const { exitCode, signal } = supervised.exit
      if (exitCode === 0) return undefined
      const line = stderr.text().split("\n").find((candidate) => candidate.trim() !== "")
      return line ?? `it exited with ${exitCode ?? signal}`
    })
  ).pipe(
    Effect.scoped,
    Effect.catchTag("SpawnError", (error) => Effect.succeed(error.message))
  )

/**
 * `undefined` when the runner works, else why it does not (its first stderr line when it said why).
 */
export const probeRunner = (
  wrapper: ProcessSpawner.Wrapper,
  dialect: RunnerDialect,
  timeoutMs: number,
  graceMs: number
): Effect.Effect<string | undefined, never, ProcessSpawner> => {
  const attempt = (pauses: ReadonlyArray<number>): Effect.Effect<string | undefined, never, ProcessSpawner> =>
    Effect.flatMap(probeOnce(wrapper, timeoutMs, graceMs), (failure) => {
      const [pause, ...later] = pauses
      return pause !== undefined && metMountRace(dialect, failure)
        ? Effect.zipRight(Effect.sleep(pause), attempt(later))
        : Effect.succeed(failure)
    })
  return attempt(mountRacePausesMs).pipe(Effect.withSpan("BashExecutor.probeRunner"))
}
