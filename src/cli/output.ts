/**
 * Writing to stdout/stderr as effects that complete once the stream has taken the bytes, so an
 * exit right after never cuts output short.
 *
 * A stream whose reader is gone (`effect-bash run -- … | head`, a closed terminal) fails its writes
 * (EPIPE, EIO) and emits `error`, which would crash the process past every finalizer: each stream
 * written here gets a listener, and a failed write to stdout ends the program with
 * {@link brokenPipeExitCode} (its finalizers run) while one to stderr is dropped.
 */
import * as Effect from "effect/Effect"
import { brokenPipeExitCode, ExitCode } from "./exit.js"

const ignoreError = () => {}

/** Writes `text`; true once the stream took it, false if the write failed. */
const write = (stream: NodeJS.WriteStream, text: string): Effect.Effect<boolean> =>
  text === "" ? Effect.succeed(true) : Effect.async<boolean>((resume) => {
    if (!stream.listeners("error").includes(ignoreError)) stream.on("error", ignoreError)
    stream.write(text, (error) => resume(Effect.succeed(error === undefined || error === null)))
  })

/**
 * Writes `text` to stdout exactly as given; fails with exit code {@link brokenPipeExitCode} when
 * stdout no longer takes it.
 */
export const writeStdout = (text: string): Effect.Effect<void, ExitCode> =>
  Effect.flatMap(write(process.stdout, text), (taken) =>
    taken ? Effect.void : Effect.fail(new ExitCode({ code: brokenPipeExitCode })))

/**
 * Writes `text` to stderr exactly as given; text stderr no longer takes is dropped.
 */
export const writeStderr = (text: string): Effect.Effect<void> => Effect.asVoid(write(process.stderr, text))
