/**
 * What @effect/cli prints (help, usage errors), tidied for this CLI: usage lines read
 * `effect-bash run …` instead of `$ run …`, the generic sentences it puts before every option's own
 * description ("A user-defined piece of text.") are dropped, and ANSI colour is removed unless the
 * stream is a terminal and `NO_COLOR` is unset (https://no-color.org).
 */
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import { stripAnsi } from "../tool/modelText.js"

/** The sentences @effect/cli derives from an option's type, shown before its real description. */
const genericSentence =
  /^ *(?:A user-defined piece of text(?: that is confidential)?|A true or false value|An integer|A floating point number)\.\n\n?/gm

/** A usage line: `$ run [flags] <command>...` or `$ effect-bash`. */
const usageLine = /^\$ (.*)$/gm

/**
 * Whether colour may be written to `stream`.
 */
const colourAllowed = (stream: NodeJS.WriteStream): boolean => stream.isTTY === true && !process.env["NO_COLOR"]

/**
 * One piece of @effect/cli output as this CLI prints it on `stream`.
 */
export const tidyCliText = (text: string, stream: NodeJS.WriteStream): string => {
  const tidied = text
    .replace(usageLine, (_, rest: string) => (rest.startsWith("effect-bash") ? rest : `effect-bash ${rest}`))
    .replace(genericSentence, "")
  return colourAllowed(stream) ? tidied : stripAnsi(tidied)
}

const tidy = (stream: NodeJS.WriteStream) => (arg: unknown) => typeof arg === "string" ? tidyCliText(arg, stream) : arg

/**
 * Runs `effect` with a `Console` whose `log` (stdout) and `error` (stderr) tidy @effect/cli's text.
 */
export const withTidyCliConsole = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Console.consoleWith((current) =>
    Console.withConsole(effect, {
      ...current,
      log: (...args) => current.log(...args.map(tidy(process.stdout))),
      error: (...args) => current.error(...args.map(tidy(process.stderr)))
    })
  )
