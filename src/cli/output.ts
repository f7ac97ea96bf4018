/**
 * Writing to stdout/stderr as effects that complete once the stream has taken the bytes, so an
 * exit right after never cuts output short.
 */
import * as Effect from "effect/Effect"

const write = (stream: NodeJS.WriteStream, text: string): Effect.Effect<void> =>
  text === "" ? Effect.void : Effect.async<void>((resume) => {
    stream.write(text, () => resume(Effect.void))
  })

/**
 * Writes `text` to stdout exactly as given.
 */
export const writeStdout = (text: string): Effect.Effect<void> => write(process.stdout, text)

/**
 * Writes `text` to stderr exactly as given.
 */
export const writeStderr = (text: string): Effect.Effect<void> => write(process.stderr, text)
