/**
 * The plugin's configuration: one `effect/Schema` struct, published to Cordis as a Standard Schema.
 */
import type * as ParseResult from "effect/ParseResult"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as SchemaAST from "effect/SchemaAST"
import { ContainerSettings } from "../layers/containerSettings.js"
import * as LocalBashExecutor from "../layers/LocalBashExecutor.js"
import * as SandboxBashExecutor from "../layers/SandboxBashExecutor.js"
import { expectationOf, kindOf, settingOf } from "../layers/settingsSchema.js"

const optional = <S extends Schema.Schema.Any>(schema: S) => Schema.optionalWith(schema, { exact: true })

/**
 * A settings field as Cordis takes it: optional, no default filled in (the layer fills them), and a
 * bad number named in the message (`timeoutMs must be a positive finite number, got -1`).
 */
const named = <S extends Schema.Schema.AnyNoContext>(key: string, schema: S) => {
  const expectation = expectationOf(schema)
  const message = kindOf(schema)._tag === "number" && Option.isSome(expectation)
    ? { [SchemaAST.MessageAnnotationId]: (issue: ParseResult.ParseIssue) => `${key} must be ${expectation.value}, got ${String(issue.actual)}` }
    : {}
  return optional(Schema.make<Schema.Schema.Type<S>, Schema.Schema.Encoded<S>>(SchemaAST.annotations(schema.ast, message)))
}

/** A settings field as Cordis takes it: a property signature (optional in the settings) as {@link named}. */
type ConfigField<F> = F extends { readonly from: infer S extends Schema.Schema.AnyNoContext } & Schema.PropertySignature.Any
  ? Schema.optionalWith<Schema.Schema<Schema.Schema.Type<S>, Schema.Schema.Encoded<S>>, { readonly exact: true }>
  : F

/** The settings of a settings Schema as Cordis takes them, but for the fields in `Skip`. */
type ConfigFields<Fields extends Schema.Struct.Fields, Skip extends keyof Fields> = {
  readonly [K in Exclude<keyof Fields, Skip>]: ConfigField<Fields[K]>
}

/**
 * Every field of `fields` that is a setting (carries the `setting` annotation, as every CLI flag and
 * `EFFECT_BASH_*` variable does), but those in `skip`: a new setting reaches the plugin's config
 * without a second list. A required setting (the container's `image`) stays required. For the type,
 * `Skip` also names the fields that are no settings; a test of the config checks that its fields are
 * exactly the settings, so the type and the schema agree.
 */
const settingsFields = <Fields extends Schema.Struct.Fields, Skip extends keyof Fields & string = never>(
  fields: Fields,
  skip: ReadonlyArray<Skip> = []
): ConfigFields<Fields, Skip> =>
  Object.fromEntries(
    Object.entries(fields).flatMap(([key, field]) =>
      (skip as ReadonlyArray<string>).includes(key) || Option.isNone(settingOf(field)) ? [] : [[
        key,
        Schema.isSchema(field) ? field : named(key, (field as unknown as { readonly from: Schema.Schema.AnyNoContext }).from)
      ]]
    )
  ) as ConfigFields<Fields, Skip>

const localFields = LocalBashExecutor.Settings.fields
const sandboxFields = SandboxBashExecutor.Settings.fields

/** The sandboxing executor's own settings (the local executor's are the plugin's top level). */
const { sandboxMode: _sandboxMode, ...sandboxOwnFields } = sandboxFields

/**
 * The configuration fields; every one is optional. The executors' come from their settings Schemas
 * (`LocalBashExecutor.Settings`, `SandboxBashExecutor.Settings`, `ContainerSettings`): each of
 * their settings, with its bounds and defaults, and nothing else.
 */
export const EffectBashConfigFields = Schema.Struct({
  /** The local executor's settings (`escalation` is an effect, set in code: not a setting). */
  ...settingsFields<typeof localFields, "escalation">(localFields),
  /** Offer `run_in_background` on the `bash` tool (default true). */
  enableRunInBackground: optional(Schema.Boolean),
  /** The harness home exported as `DSH_HOME` (default: `$DSH_HOME`, else `~/.dsh`). */
  dshHome: optional(Schema.String),
  /** Where session JSONL files live, when the host has no `sessionPersistence` service. */
  sessionJsonlDir: optional(Schema.String),
  /** Register the tools and the prompt section with a host tool registry (default true). */
  registerTools: optional(Schema.Boolean),
  /** Confine commands with the sandboxing executor (present → `sandbox_permissions` is offered). */
  sandbox: optional(Schema.Struct({
    /** The default mode. */
    mode: sandboxFields.sandboxMode.from,
    /** Its own settings (`home` is the test suite's, not a setting). */
    ...settingsFields<typeof sandboxOwnFields, keyof typeof localFields | "home">(
      sandboxOwnFields,
      Object.keys(localFields) as Array<keyof typeof localFields>
    ),
    /** The bubblewrap binary (default: found on `PATH`), apart from the one `contain` runs. */
    bwrapPath: named("bwrapPath", sandboxFields.bwrapPath.from)
  })),
  /** Run commands in containers on a Docker Engine, one per session (not together with `sandbox`). */
  container: optional(Schema.Struct(settingsFields(ContainerSettings.fields))),
  /**
   * How a completion notice reaches an idle harness agent: `wakeup` opens a turn for it (at most 3 in
   * a row until the user speaks), `quiet` only injects it into the agent's next step (default `wakeup`).
   */
  completionDelivery: optional(
    Schema.String.pipe(
      Schema.filter((mode): mode is "wakeup" | "quiet" => mode === "wakeup" || mode === "quiet", {
        message: (issue) => `completionDelivery must be "wakeup" or "quiet", got ${JSON.stringify(issue.actual)}`
      })
    )
  )
}).annotations({ identifier: "EffectBashConfig" })

/**
 * The decoded configuration.
 *
 * @since 0.1.0
 * @category models
 */
export type EffectBashConfig = typeof EffectBashConfigFields.Type

const undefinedAsEmpty = Schema.transform(Schema.Unknown, Schema.Unknown, {
  strict: true,
  decode: (input) => input ?? {},
  encode: (output) => output
})

/**
 * The plugin's `Config`: a Standard Schema that accepts `undefined` (all defaults) and rejects an
 * unknown key or a bad value with an issue whose path and message name the field.
 *
 * @since 0.1.0
 * @category schemas
 */
export const Config = Schema.standardSchemaV1(Schema.compose(undefinedAsEmpty, EffectBashConfigFields), {
  errors: "all",
  onExcessProperty: "error"
})
