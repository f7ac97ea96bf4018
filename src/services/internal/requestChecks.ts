/**
 * Checks of a request's text fields that the tools and every executor share, with one wording:
 * NUL bytes (no argument or path of a process can carry one), path lengths the OS refuses, and how
 * a message quotes a value it was given (capped, so a huge value never makes a huge message).
 *
 * @internal
 */

/**
 * The most characters of a value an error message echoes; longer ones end in `…`.
 */
const maxEchoedChars = 200

/**
 * `text` cut to {@link maxEchoedChars} characters plus `…` when longer (never inside a surrogate pair).
 */
export const capEchoed = (text: string): string => {
  if (text.length <= maxEchoedChars) return text
  const cut = /[\uD800-\uDBFF]/.test(text[maxEchoedChars - 1]!) ? maxEchoedChars - 1 : maxEchoedChars
  return `${text.slice(0, cut)}…`
}

/**
 * A value as messages quote it: its JSON (its string form when it has none, like `undefined`; its type
 * tag when it cannot be serialized), capped.
 */
export const echoValue = (value: unknown): string => {
  let text: string
  try {
    text = JSON.stringify(value) ?? String(value)
  } catch {
    // JSON nested too deep for the stack, a cycle, an uncallable `toString`: name the type instead.
    text = Object.prototype.toString.call(value)
  }
  return capEchoed(text)
}

/**
 * The message for a command with a NUL byte, or `undefined` when it has none.
 */
export const commandNulProblem = (command: string): string | undefined =>
  command.includes("\0") ? "invalid command: expected a string without NUL bytes" : undefined

/** Linux's `PATH_MAX` (with its terminating NUL) and `NAME_MAX`. */
const maxPathBytes = 4095
const maxNameBytes = 255

/**
 * The message for a workdir the OS cannot take (a NUL byte, longer than `PATH_MAX`, a name longer
 * than `NAME_MAX`), or `undefined` when it is fine.
 */
export const workdirProblem = (workdir: string): string | undefined => {
  if (workdir.includes("\0")) return `invalid workdir: expected a path without NUL bytes, got ${echoValue(workdir)}`
  const tooLong = Buffer.byteLength(workdir) > maxPathBytes ||
    workdir.split("/").some((name) => Buffer.byteLength(name) > maxNameBytes)
  return tooLong
    ? `invalid workdir: longer than the OS allows (${maxPathBytes} bytes, ${maxNameBytes} per name), got ${echoValue(workdir)}`
    : undefined
}
