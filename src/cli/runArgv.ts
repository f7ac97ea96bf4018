/**
 * `run`'s command line, checked before @effect/cli reads it. @effect/cli takes an option anywhere
 * and passes an unknown one on as a positional argument, so `run --timeout 5000 -- 'echo hi'` would
 * run `--timeout 5000 -- echo hi` through bash and `run echo hi --json` would lose `--json` to the
 * CLI. Here an unknown flag is an error, and flags end at the first command word (a `--` is
 * inserted before it), so the command's words are passed on exactly.
 */
import * as AutoCorrect from "@effect/cli/AutoCorrect"
import * as CliConfig from "@effect/cli/CliConfig"
import * as Effect from "effect/Effect"
import { capEchoed } from "../services/internal/requestChecks.js"
import { SettingsError } from "./settings.js"

/**
 * The flags a command accepts, by whether they take a value; names without the leading dashes.
 */
export interface FlagNames {
  readonly valued: ReadonlyArray<string>
  readonly boolean: ReadonlyArray<string>
}

/** @effect/cli's built-in options, accepted by every command. */
const builtIns: FlagNames = { valued: ["completions", "log-level"], boolean: ["help", "h", "version", "wizard"] }

const dashed = (name: string) => (name.length === 1 ? `-${name}` : `--${name}`)

const unknownFlag = (flag: string, known: ReadonlyArray<string>): SettingsError => {
  const name = flag.replace(/^-+/, "")
  const closest = known
    .map((candidate) => ({ candidate, distance: AutoCorrect.levensteinDistance(name, candidate, CliConfig.defaultConfig) }))
    .filter(({ candidate, distance }) => candidate.startsWith(name) || distance <= 2)
    .sort((a, b) => a.distance - b.distance)[0]
  const hint = closest === undefined ? "" : ` (did you mean ${dashed(closest.candidate)}?)`
  return new SettingsError({
    field: flag,
    message: `${capEchoed(flag)}: unknown flag${hint}; a command starting with - goes after --`
  })
}

/**
 * The subcommand's arguments (`argv` after the subcommand's name) with `--` inserted before the first
 * command word, or an error naming an unknown flag or a flag missing its value.
 */
const separateCommandWords = (
  args: ReadonlyArray<string>,
  flags: FlagNames
): Effect.Effect<ReadonlyArray<string>, SettingsError> => {
  const valued = new Set([...flags.valued, ...builtIns.valued])
  const boolean = new Set([...flags.boolean, ...builtIns.boolean])
  for (let index = 0; index < args.length; index++) {
    const arg = args[index]!
    if (arg === "--") return Effect.succeed(args)
    if (!arg.startsWith("-") || arg === "-") return Effect.succeed([...args.slice(0, index), "--", ...args.slice(index)])
    const [flag, inlineValue] = arg.includes("=") ? [arg.slice(0, arg.indexOf("=")), arg] : [arg, undefined]
    const name = flag.replace(/^--?/, "")
    if (boolean.has(name)) continue
    if (!valued.has(name)) return Effect.fail(unknownFlag(flag, [...valued, ...boolean].filter((known) => known.length > 1)))
    if (inlineValue !== undefined) continue
    if (index + 1 >= args.length) {
      return Effect.fail(new SettingsError({ field: flag, message: `${flag}: expected a value` }))
    }
    index++
  }
  return Effect.succeed(args)
}

/**
 * `argv` (`process.argv`) with the `run` subcommand's arguments checked by
 * {@link separateCommandWords}; any other command line is returned as it is.
 */
export const checkRunArgv = (
  argv: ReadonlyArray<string>,
  runFlags: FlagNames
): Effect.Effect<ReadonlyArray<string>, SettingsError> => {
  // argv is [node, script, ...root options, subcommand, ...its arguments]; root options take no values
  // we need to skip except the two valued built-ins.
  let index = 2
  while (index < argv.length && argv[index]!.startsWith("-")) {
    index += builtIns.valued.includes(argv[index]!.replace(/^--?/, "")) ? 2 : 1
  }
  if (argv[index] !== "run") return Effect.succeed(argv)
  return Effect.map(
    separateCommandWords(argv.slice(index + 1), runFlags),
    (args) => [...argv.slice(0, index + 1), ...args]
  )
}

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
