/**
 * A spinner on stderr while a step waits — only when stderr is a terminal, so CI logs and pipes
 * never see control characters.
 */
import * as Effect from "effect/Effect"
import { writeStderr } from "./output.js"

const frames = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"]
const frameMs = 100
/** Quick steps finish before the spinner would show, so they never flicker. */
const showAfterMs = 300

const draw = (label: string) =>
  Effect.gen(function*() {
    yield* Effect.sleep(showAfterMs)
    for (let tick = 0; ; tick++) {
      const seconds = ((showAfterMs + tick * frameMs) / 1000).toFixed(1)
      yield* writeStderr(`\r${frames[tick % frames.length]} ${label} ${seconds}s`)
      yield* Effect.sleep(frameMs)
    }
  })

/**
 * Runs `effect` with a spinner labelled `label` on stderr (when stderr is a TTY), erased afterwards.
 */
export const withProgress = (label: string) => <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  process.stderr.isTTY
    ? Effect.scoped(Effect.zipRight(Effect.forkScoped(draw(label)), effect)).pipe(
      Effect.ensuring(writeStderr("\r\x1b[2K"))
    )
    : effect
