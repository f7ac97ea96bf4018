/**
 * How the CLI ends: the exit code of a finished program, and the codes a bash result maps to.
 *
 * Codes follow GNU `timeout(1)`: the command's own exit code; 124 when it timed out; 128+n when
 * signal n ended it; 125 when the tool itself could not run it (an error result such as a missing
 * workdir or `command aborted`), so it never collides with the command's own `exit 1`. Invalid flags
 * or settings exit 2, other failures 1, an interrupt by SIGINT/SIGTERM 128+n, and a stdout nobody
 * reads any more 141.
 */
import * as Cause from "effect/Cause"
import * as Data from "effect/Data"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import { constants } from "node:os"

/**
 * A subcommand finished and asks the process to exit with `code` (its output is already printed).
 */
export class ExitCode extends Data.TaggedError("ExitCode")<{ readonly code: number }> {}

/**
 * The tool could not run the command (an error result).
 */
export const toolErrorExitCode = 125

/**
 * stdout's reader is gone (`effect-bash run -- … | head`): what a shell shows for a command killed by
 * SIGPIPE (128 + 13).
 */
export const brokenPipeExitCode = 141

/**
 * Invalid flags or settings.
 */
export const usageExitCode = 2

/**
 * `128 + n` for a signal name (`SIGKILL` → 137), or `undefined` for a name this OS does not know.
 */
const signalExitCode = (signal: string): number | undefined => {
  const number = (constants.signals as Readonly<Record<string, number | undefined>>)[signal]
  return number === undefined ? undefined : 128 + number
}

/**
 * The exit code mirroring one foreground run: 124 on timeout, 128+n on a signal, else its exit code.
 */
export const runExitCode = (result: {
  readonly timedOut: boolean
  readonly signal: string | null
  readonly exitCode: number | null
}): number => {
  if (result.timedOut) return 124
  if (result.signal !== null) return signalExitCode(result.signal) ?? 1
  return result.exitCode ?? 1
}

/**
 * The process exit code for the CLI program's exit; `signal` is the signal that interrupted it, if any.
 */
export const processExitCode = (exit: Exit.Exit<unknown, unknown>, signal: string | undefined): number => {
  if (Exit.isSuccess(exit)) return 0
  if (Cause.isInterruptedOnly(exit.cause)) return (signal === undefined ? undefined : signalExitCode(signal)) ?? 130
  const failure = Cause.failureOption(exit.cause)
  return Option.isSome(failure) && failure.value instanceof ExitCode ? failure.value.code : 1
}
