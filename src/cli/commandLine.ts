/**
 * Checks of the whole command line before @effect/cli reads it, from what the process was started
 * with: arguments whose bytes Node could not decode, and a `--wizard` nobody can answer.
 */
import * as Effect from "effect/Effect"
import { capEchoed } from "../services/internal/requestChecks.js"
import { SettingsError } from "./settings.js"

/**
 * `argv` as it is, unless it asks for @effect/cli's `--wizard` while stdin is no terminal: the wizard
 * would wait for answers nobody can type.
 */
export const checkWizard = (
  argv: ReadonlyArray<string>,
  stdinIsTerminal: boolean
): Effect.Effect<ReadonlyArray<string>, SettingsError> => {
  const end = argv.indexOf("--")
  const flags = end === -1 ? argv : argv.slice(0, end)
  if (!flags.includes("--wizard") || stdinIsTerminal) return Effect.succeed(argv)
  return Effect.fail(
    new SettingsError({ field: "--wizard", message: "--wizard: asks its questions on a terminal, and stdin is not one" })
  )
}

const utf8 = new TextDecoder("utf-8", { fatal: true })

/**
 * `argv` (`process.argv`) as it is, unless in the raw command line (`/proc/self/cmdline`,
 * NUL-separated; undefined where there is none) an argument is not UTF-8: Node decodes `process.argv`
 * as UTF-8 and replaces such bytes, so `run` would run other bytes than it was given, and a flag's
 * value would name another path.
 */
export const checkArgvBytes = (
  argv: ReadonlyArray<string>,
  cmdline: Uint8Array | undefined
): Effect.Effect<ReadonlyArray<string>, SettingsError> => {
  if (cmdline === undefined) return Effect.succeed(argv)
  const words: Array<Uint8Array> = []
  for (let start = 0; start < cmdline.length;) {
    const end = cmdline.indexOf(0, start)
    words.push(cmdline.subarray(start, end === -1 ? cmdline.length : end))
    start = end === -1 ? cmdline.length : end + 1
  }
  // The arguments are its last words (before them: node, its options and the script's path).
  const argumentCount = argv.length - 2
  const bad = (argumentCount > 0 ? words.slice(-argumentCount) : []).find((word) => {
    try {
      utf8.decode(word)
      return false
    } catch {
      return true
    }
  })
  return bad === undefined ? Effect.succeed(argv) : Effect.fail(
    new SettingsError({
      field: "argv",
      message: `${capEchoed(JSON.stringify(Buffer.from(bad).toString("utf8")))} is not UTF-8 text: ` +
        "effect-bash reads its arguments as text, and would pass on other bytes"
    })
  )
}
