/**
 * The small checks the tools' argument validators share.
 *
 * @since 0.1.0
 */

/**
 * The model's arguments as a record; anything that is not an object counts as no arguments.
 *
 * @since 0.1.0
 */
export const argumentRecord = (raw: unknown): Readonly<Record<string, unknown>> =>
  typeof raw === "object" && raw !== null ? raw as never : {}

/**
 * A value as the messages quote it: its JSON, or its string form when it has none (`undefined`), or
 * its type tag when it cannot be serialized (JSON nested too deep for the stack, a cycle).
 *
 * @since 0.1.0
 */
export const quoted = (value: unknown): string => {
  try {
    return JSON.stringify(value) ?? String(value)
  } catch {
    return Object.prototype.toString.call(value)
  }
}

/**
 * A string with something other than white space in it.
 *
 * @since 0.1.0
 */
export const isNonBlank = (value: unknown): value is string => typeof value === "string" && value.trim().length > 0

/**
 * A positive finite number.
 *
 * @since 0.1.0
 */
export const isPositiveNumber = (value: unknown): value is number =>
  typeof value === "number" && Number.isFinite(value) && value > 0
