/**
 * The generic plugin's configuration fields, and the one `effect/Schema` struct they make together
 * with a harness adapter's own fields, published to Cordis as a Standard Schema.
 */
import type * as ParseResult from "effect/ParseResult"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as SchemaAST from "effect/SchemaAST"
import { ContainerNetworkSettings, ContainerSettings } from "../layers/containerSettings.js"
import * as LocalBashExecutor from "../layers/LocalBashExecutor.js"
import * as SandboxBashExecutor from "../layers/SandboxBashExecutor.js"
import * as TerminalsLive from "../layers/TerminalsLive.js"
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
 * The generic plugin's configuration fields; every one is optional. The executors' come from their
 * settings Schemas (`LocalBashExecutor.Settings`, `SandboxBashExecutor.Settings`,
 * `ContainerSettings`): each of their settings, with its bounds and defaults, and nothing else.
 */
export const PluginConfigFields = Schema.Struct({
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
  /**
   * Persistent terminals (`ctx.terminals` and the six `terminal_*` tools; needs the optional peer
   * `node-pty`): `true`, or the terminals' settings (checked when the plugin loads).
   */
  terminals: optional(
    Schema.Union(
      Schema.Boolean,
      Schema.encodedSchema(TerminalsLive.Settings).annotations({ identifier: "TerminalsLive.Settings" })
    )
  ),
  /** Run commands in containers on a Docker Engine, one per session (not together with `sandbox`). */
  container: optional(Schema.Struct(settingsFields({ ...ContainerSettings.fields, ...ContainerNetworkSettings.fields })))
})

/**
 * The generic plugin's decoded configuration.
 */
export type PluginConfig = typeof PluginConfigFields.Type

const undefinedAsEmpty = Schema.transform(Schema.Unknown, Schema.Unknown, {
  strict: true,
  decode: (input) => input ?? {},
  encode: (output) => output
})

/**
 * The plugin's configuration with a harness adapter's own fields: the struct, and its `Config` for
 * Cordis, a Standard Schema that accepts `undefined` (all defaults) and rejects an unknown key or a
 * bad value with an issue whose path and message name the field.
 */
export const configWith = <Fields extends Schema.Struct.Fields>(harnessFields: Fields) => {
  const fields = Schema.Struct({ ...PluginConfigFields.fields, ...harnessFields }).annotations({
    identifier: "EffectBashConfig"
  })
  // A config is plain data: no field needs a service to decode (TypeScript cannot see that of a
  // struct over generic fields).
  const decoded = fields as unknown as Schema.Schema<typeof fields.Type, typeof fields.Encoded>
  const Config = Schema.standardSchemaV1(Schema.compose(undefinedAsEmpty, decoded), {
    errors: "all",
    onExcessProperty: "error"
  })
  return { fields, Config }
}
