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

