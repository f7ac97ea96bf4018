/**
 * The runner's usability probe: `<runner> -- bash -c true` through the `ProcessSpawner`, bounded in
 * time on the Clock, started again after each pause of {@link mountRacePausesMs} (on the Clock) while
 * it fails with its dialect's mount race.
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { ProcessSpawner } from "../../../services/ProcessSpawner.js"
import { killGroup } from "../executor/killGroup.js"
import type { RunnerDialect } from "../executor/RunnerWatch.js"

/**
 * The pauses before each new start of a probe that met a mount race. A host's mount table can change
 * for a while (a container engine starting or removing several containers), so the pauses grow.
 */
export const mountRacePausesMs: ReadonlyArray<number> = [100, 200, 400, 800]

/** Whether a probe's failure is its dialect's mount race, which a later start may not meet. */
export const metMountRace = (dialect: RunnerDialect, failure: string | undefined): boolean =>
  failure !== undefined && dialect.mountRacePrefix !== undefined && failure.startsWith(dialect.mountRacePrefix)

const decoder = new TextDecoder()

/** What the probe's process says: `undefined` when it worked. */
const outcomeOf = (process: ProcessSpawner.Process, timeoutMs: number, graceMs: number) =>
  Effect.gen(function*() {
    let text = ""
    const output = process.openPipes({
      stdout: () => undefined,
      stderr: (chunk) => {
        text += decoder.decode(chunk)
        return undefined
      }
    }).drain
    const outcome = yield* Effect.all([process.exit, output], { concurrency: "unbounded" }).pipe(
      Effect.timeoutOption(timeoutMs)
    )
    if (Option.isNone(outcome)) {
      yield* killGroup(process, graceMs)
      return `it did not finish within ${timeoutMs}ms`
    }
    const [exit] = outcome.value
    if (exit.exitCode === 0) return undefined
    const line = text.split("\n").find((candidate) => candidate.trim() !== "")
    return line ?? `it exited with ${exit.exitCode ?? exit.signal}`
  })

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
      // Interrupted (the layer closing): the probe's process goes through the kill path too.
      yield* Effect.addFinalizer(() =>
        Effect.flatMap(process.groupAlive, (alive) => (alive ? killGroup(process, graceMs) : Effect.void))
      )
      return yield* restore(outcomeOf(process, timeoutMs, graceMs))
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
