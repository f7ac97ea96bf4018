/**
 * The building blocks of the layers' settings Schemas. A configurable layer describes its settings
 * once, as an `effect/Schema` struct: each field carries its default, its bound (a filter whose
 * message the layer reports) and, as a {@link Setting} annotation, the `EFFECT_BASH_*` variable and
 * the CLI flag it is read from. The env `Config`, the Cordis config and the CLI flags are derived
 * from that struct; nothing else writes a default or a bound.
 */
import * as Config from "effect/Config"
import * as ConfigError from "effect/ConfigError"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import * as SchemaAST from "effect/SchemaAST"

/** The key of the {@link Setting} annotation. */
export const SettingId: unique symbol = Symbol.for("effect-bash/Setting")

/** Where a setting is read from, besides code. */
export interface Setting {
  /** The variable under `EFFECT_BASH_`: `TIMEOUT_MS` is read from `EFFECT_BASH_TIMEOUT_MS`. */
  readonly env: string
  /**
   * The CLI flag, when the CLI offers one: its name without `--`, its placeholder, and its help text
   * given the variable's full name.
   */
  readonly flag?: {
    readonly name: string
    readonly pseudo?: string
    readonly description: (env: string) => string
  }
}

/** The annotations that mark a settings field as a {@link Setting}. */
export const setting = (annotation: Setting) => ({ [SettingId]: annotation })

/**
 * {@link setting} for a variable with a flag that takes a value (shown as `pseudo`), whose help is
 * `description` followed by the variable's name.
 */
export const flaggedSetting = (env: string, name: string, pseudo: string, description: string) =>
  setting({ env, flag: { name, pseudo, description: (variable) => `${description} (env ${variable})` } })

/** The prefix of every `EFFECT_BASH_*` variable, as a `Config.nested` segment. */
const envPrefix = "EFFECT_BASH"

/** The full name of a setting's variable: `EFFECT_BASH_TIMEOUT_MS`. */
export const envName = (setting: Setting): string => `${envPrefix}_${setting.env}`

/**
 * A number that is positive and finite. Any other value (a string included) fails with
 * `must be a positive finite number`, which a layer prefixes with its name and the field.
 */
export const PositiveFinite = Schema.Number.pipe(
  Schema.filter((n) => Number.isFinite(n) && n > 0),
  Schema.annotations({
    description: "a positive finite number",
    message: () => ({ message: "must be a positive finite number", override: true })
  })
)

/** A positive safe integer; other values fail with `must be a positive integer`. */
export const PositiveInt = Schema.Number.pipe(
  Schema.filter((n) => Number.isSafeInteger(n) && n > 0),
  Schema.annotations({
    description: "a positive integer",
    message: () => ({ message: "must be a positive integer", override: true })
  })
)

/**
 * A field's schema without its property signature (`optionalWith(S, …)` → `S`), where the
 * annotations live.
 */
const fieldSchema = (field: Schema.Struct.Field): Schema.Schema.Any =>
  Schema.isSchema(field) ? field : (field as unknown as { readonly from: Schema.Schema.Any }).from

/** The {@link Setting} annotation of a field, when it has one. */
export const settingOf = (field: Schema.Struct.Field): Option.Option<Setting> =>
  SchemaAST.getAnnotation<Setting>(fieldSchema(field).ast, SettingId)

/** The field schema's `description` annotation: what a valid value is ("a positive finite number"). */
export const expectationOf = (field: Schema.Struct.Field): Option.Option<string> =>
  SchemaAST.getDescriptionAnnotation(fieldSchema(field).ast)

/** For a list field, what a valid element is ("a valid regular expression"). */
export const elementExpectationOf = (field: Schema.Struct.Field): Option.Option<string> => {
  const ast = fieldSchema(field).ast
  return SchemaAST.isTupleType(ast) && ast.rest[0] !== undefined
    ? SchemaAST.getDescriptionAnnotation(ast.rest[0].type)
    : Option.none()
}

/** What a field holds, as the env `Config` and the CLI read it. */
export type SettingKind =
  | { readonly _tag: "number" }
  | { readonly _tag: "boolean" }
  | { readonly _tag: "string" }
  | { readonly _tag: "list" }
  | { readonly _tag: "choice"; readonly choices: ReadonlyArray<string> }

const kindOfAst = (ast: SchemaAST.AST): SettingKind => {
  if (SchemaAST.isRefinement(ast)) return kindOfAst(ast.from)
  if (SchemaAST.isNumberKeyword(ast)) return { _tag: "number" }
  if (SchemaAST.isBooleanKeyword(ast)) return { _tag: "boolean" }
  if (SchemaAST.isStringKeyword(ast)) return { _tag: "string" }
  if (SchemaAST.isTupleType(ast)) return { _tag: "list" }
  return { _tag: "choice", choices: literalsOf(ast) }
}

/** The literals of a union, nested unions included; other members (a struct form) have no text. */
const literalsOf = (ast: SchemaAST.AST): ReadonlyArray<string> =>
  SchemaAST.isUnion(ast) ? ast.types.flatMap(literalsOf) : SchemaAST.isLiteral(ast) ? [String(ast.literal)] : []

/** What a field holds. */
export const kindOf = (field: Schema.Struct.Field): SettingKind => kindOfAst(fieldSchema(field).ast)

const decimal = /^[+-]?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?$/i

/**
 * The number a setting's text spells in decimal notation (`120000`, `1.5e3`), or `undefined` for any
 * other text: blank, hexadecimal, `Infinity`, words. Flags and variables read numbers this way.
 */
export const parseDecimal = (text: string): number | undefined =>
  decimal.test(text.trim()) ? Number(text) : undefined

const decimalConfig = (name: string): Config.Config<number> =>
  Config.string(name).pipe(Config.mapOrFail((text) => {
    const number = parseDecimal(text)
    return number === undefined
      ? Either.left(ConfigError.InvalidData([], `Expected a number value but received ${JSON.stringify(text)}`))
      : Either.right(number)
  }))

const envConfigOf = (setting: Setting, kind: SettingKind): Config.Config<unknown> => {
  switch (kind._tag) {
    case "number":
      return decimalConfig(setting.env)
    case "boolean":
      return Config.boolean(setting.env)
    case "string":
      return Config.string(setting.env)
    case "list":
      return Config.array(Config.string(), setting.env)
    case "choice":
      return Config.literal(...kind.choices)(setting.env)
  }
}

/**
 * The `EFFECT_BASH_*` variables of a settings struct as one `Config`: each field with a
 * {@link Setting} annotation, read by its kind (a list is comma-separated); unset variables are
 * left out, so the layer's defaults apply. Bounds are the layer's to check, so its errors read the
 * same whichever way a value came in.
 */
export const environmentOf = <Fields extends Schema.Struct.Fields>(
  struct: Schema.Struct<Fields>
): Config.Config<Schema.Struct.Encoded<Fields>> => {
  const entries = Object.entries(struct.fields).flatMap(([key, field]) =>
    Option.match(settingOf(field), {
      onNone: () => [],
      onSome: (setting) => [[key, Config.option(envConfigOf(setting, kindOf(field)))] as const]
    })
  )
  return Config.all(Object.fromEntries(entries)).pipe(
    Config.map((options) =>
      Object.fromEntries(
        Object.entries(options).flatMap(([key, value]) => Option.isSome(value) ? [[key, value.value]] : [])
      ) as Schema.Struct.Encoded<Fields>
    ),
    Config.nested(envPrefix)
  )
}

/** The first problem of a decoding, as the field it is in and the message of the failing check. */
export interface SettingProblem {
  readonly field: string
  /** The path below the field, e.g. the index of a bad list element. */
  readonly path: ReadonlyArray<PropertyKey>
  readonly message: string
}

const problemOf = (error: ParseResult.ParseError): SettingProblem => {
  const [first] = ParseResult.ArrayFormatter.formatErrorSync(error)
  const [field, ...path] = first?.path ?? []
  return { field: String(field ?? "settings"), path, message: first?.message ?? error.message }
}

/**
 * Decodes `input` with a settings struct, filling defaults; on failure, the first problem. Keys set
 * to `undefined` count as unset.
 */
export const decodeSettings = <A, I>(
  schema: Schema.Schema<A, I>,
  input: unknown
): Effect.Effect<A, SettingProblem> =>
  Effect.suspend(() => {
    const given = typeof input === "object" && input !== null
      ? Object.fromEntries(Object.entries(input).filter(([, value]) => value !== undefined))
      : input
    return Either.match(Schema.decodeUnknownEither(schema, { errors: "first" })(given), {
      onLeft: (error) => Effect.fail(problemOf(error)),
      onRight: Effect.succeed
    })
  })
