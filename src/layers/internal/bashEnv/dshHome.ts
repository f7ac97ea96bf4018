/**
 * Where `DSH_HOME` points: the configured home, else a non-blank `$DSH_HOME`, else `~/.dsh`,
 * with `~` expanded and the result made absolute.
 *
 * @internal
 */
import * as NodeOs from "node:os"
import * as NodePath from "node:path"
import * as ConfigError from "effect/ConfigError"
import * as Config from "effect/Config"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"

const nonBlank = (value: string | undefined): Option.Option<string> =>
  value !== undefined && value.trim() !== "" ? Option.some(value) : Option.none()

/**
 * Expands a leading `~` (alone or before a separator) to `home` and makes the result absolute. Only a
 * relative result reads the working directory, and fails when that is gone.
 */
const absoluteHomePath = (spelling: string, home: string): Effect.Effect<string, ConfigError.ConfigError> => {
  const expanded = spelling === "~"
    ? home
    : spelling.startsWith("~/")
    ? NodePath.join(home, spelling.slice(2))
    : spelling
  return Effect.try({
    try: () => NodePath.resolve(expanded),
    catch: () =>
      ConfigError.InvalidData(["DSH_HOME"], `DSH_HOME: ${JSON.stringify(expanded)} is relative, and the working directory no longer exists`)
  })
}

/**
 * Resolves `DSH_HOME`. The ambient `DSH_HOME` is read through Effect's `Config` (so a test sets it
 * with a `ConfigProvider`, never by mutating `process.env`), and only when no home is configured.
 */
export const resolveDshHome = (configured: string | undefined): Effect.Effect<string, ConfigError.ConfigError> =>
  Option.match(nonBlank(configured), {
    onSome: Effect.succeed,
    onNone: () =>
      Config.option(Config.string("DSH_HOME")).pipe(
        Effect.map((ambient) => Option.getOrElse(Option.flatMap(ambient, nonBlank), () => "~/.dsh"))
      )
  }).pipe(Effect.flatMap((spelling) => absoluteHomePath(spelling, NodeOs.homedir())))
