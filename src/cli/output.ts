/**
 * Writing to stdout/stderr as effects that complete once the stream has taken the bytes, so an
 * exit right after never cuts output short.
 *
 * A write that fails also makes its stream emit `error`, which would crash the process past every
 * finalizer: {@link listenForStdioErrors} (called once as the program starts) keeps that event from
 * crashing it, and the failed write itself says what happened. A stdout whose reader is gone
 * (`effect-bash run -- … | head`) ends the program quietly with {@link brokenPipeExitCode}, any
 * other failure to write it (a full disk) with an error; a failed write to stderr is dropped.
 */
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import { brokenPipeExitCode, ExitCode } from "./exit.js"

/**
 * stdout did not take the program's output, for a reason other than a reader that went away.
 */
export class StdoutError extends Data.TaggedError("StdoutError")<{ readonly message: string }> {}

const ignoreError = () => {}

/**
 * Keeps a failed write to stdout or stderr — anyone's: the logger's, @effect/cli's — from crashing
 * the process through the stream's `error` event. Idempotent.
 */
export const listenForStdioErrors = (): void => {
  for (const stream of [process.stdout, process.stderr]) {
    if (!stream.listeners("error").includes(ignoreError)) stream.on("error", ignoreError)
  }
}

/** Writes `text`; completes once the stream took it, with the error if it did not. */
const write = (stream: NodeJS.WriteStream, text: string): Effect.Effect<NodeJS.ErrnoException | undefined> =>
  text === "" ? Effect.succeed(undefined) : Effect.async((resume) => {
    stream.write(text, (error) => resume(Effect.succeed(error ?? undefined)))
  })

/**
 * Writes `text` to stdout exactly as given. Fails with exit code {@link brokenPipeExitCode} when
 * stdout's reader is gone, and with a {@link StdoutError} when stdout takes no more for another reason.
 */
export const writeStdout = (text: string): Effect.Effect<void, ExitCode | StdoutError> =>
  Effect.flatMap(write(process.stdout, text), (error): Effect.Effect<void, ExitCode | StdoutError> => {
    if (error === undefined) return Effect.void
    if (error.code === "EPIPE") return Effect.fail(new ExitCode({ code: brokenPipeExitCode }))
    return Effect.fail(new StdoutError({ message: `cannot write to stdout: ${error.message}` }))
  })

/**
 * Writes `text` to stderr exactly as given; text stderr does not take is dropped.
 */
export const writeStderr = (text: string): Effect.Effect<void> => Effect.asVoid(write(process.stderr, text))
