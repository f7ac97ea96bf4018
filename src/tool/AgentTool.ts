/**
 * One tool as a typed module: its parameters and its value as Schemas, its handler and its render.
 * What hosts publish (the JSON Schema, the descriptor) is derived from those, never written again.
 *
 * The parameter schema decodes the model's loose input itself, so the model always reads our exact
 * messages (NOTES: with `@effect/ai` a schema failure would never reach it): anything that is not an
 * object counts as no arguments, a key set to `undefined` as a key not given, unknown keys are
 * dropped, fields are checked in their order and the first failing check's message is the error.
 */
import * as Effect from "effect/Effect"
import * as JSONSchema from "effect/JSONSchema"
import * as Option from "effect/Option"
import * as ParseResult from "effect/ParseResult"
import * as Predicate from "effect/Predicate"
import * as Schema from "effect/Schema"
import type { AgentTools } from "../services/AgentTools.js"
import { ToolError } from "../services/AgentTools.js"

/**
 * What a tool is without its services, the same for every composition that offers it the same way:
 * its name, what the model reads about it, its parameters, the Schema of its value, and how a value is
 * rendered and presented. `Args` is what its parameter schema decodes, `Value` what a successful call
 * returns.
 */
export interface Definition<Args, Value> {
  readonly name: string
  readonly description: string
  readonly parameters: Parameters<Args>
  /** The canonical value: hosts store it, and replays decode it with this schema before rendering. */
  readonly success: Schema.Schema<Value, any>
  /** The model-facing text of a value (the reference tool's text, character for character). */
  readonly render: (value: Value) => string
  readonly presentCall: (args: unknown) => AgentTools.Presentation
  readonly presentResult: (args: unknown, value: Value) => AgentTools.Presentation
  /** The task whose final status a value shows, if any: its completion notice would tell nothing new. */
  readonly finalTask?: (value: Value) => string | undefined
}

/**
 * What runs a call of a tool: checked arguments in, the value or the call's error out.
 */
export type Handler<Args, Value> = (args: Args, call: AgentTools.CallContext) => Effect.Effect<Value, ToolError>

/**
 * A tool ready to call: its {@link Definition} and the {@link Handler} a composition gave it.
 */
export interface AgentTool<Args, Value> extends Definition<Args, Value> {
  readonly handle: Handler<Args, Value>
}

/**
 * `Documented` when it is exactly the type the fields decode (`Decoded`), else `never`: pins a tool's
 * documented parameter interface to its Schema, so the two cannot drift apart.
 */
export type Exactly<Documented, Decoded> = [Documented, keyof Documented] extends [Decoded, keyof Decoded]
  ? [Decoded, keyof Decoded] extends [Documented, keyof Documented] ? Documented
  : never
  : never

/**
 * A definition with its handler (as `@effect/ai`'s `toolkit.toLayer` pairs a `Tool` with its handler).
 */
export const implement = <Args, Value>(
  definition: Definition<Args, Value>,
  handle: Handler<Args, Value>
): AgentTool<Args, Value> => ({ ...definition, handle })

/**
 * Any tool, as the registry holds them side by side.
 */
export type AnyAgentTool = AgentTool<any, any>

/**
 * A tool's parameters as the registry uses them: the JSON Schema the model reads, and the decoding
 * of raw arguments, whose failure carries the first failing check's exact message.
 */
export interface Parameters<Args> {
  readonly jsonSchema: AgentTools.JsonSchema
  readonly decode: (raw: unknown) => Effect.Effect<Args, ToolError>
}

/**
 * The annotation of a field a composition decodes but does not publish: it is left out of the JSON
 * Schema the model reads.
 */
export const UnadvertisedId: unique symbol = Symbol.for("effect-bash/AgentTool/Unadvertised")

/** A field the model is not told about, decoded as before. */
export const unpublished = <F extends Schema.PropertySignature.All>(field: F): F =>
  field.annotations({ [UnadvertisedId]: true }) as F

// Property signature annotations sit on the declaration, or on the `to` side of a transformation.
const isUnadvertised = (field: Schema.Struct.Field): boolean => {
  const annotations = !Schema.isPropertySignature(field)
    ? field.ast.annotations
    : field.ast._tag === "PropertySignatureDeclaration"
    ? field.ast.annotations
    : field.ast.to.annotations
  return annotations[UnadvertisedId] === true
}

/**
 * A key this composition does not publish (`run_in_background` with background disabled): its value
 * is ignored, unless `refuses(value)`, when the call fails with `message` — in the key's turn among
 * the fields. Absent from the JSON Schema.
 */
export const unadvertised = (message: string, refuses: (value: unknown) => boolean) =>
  unpublished(Schema.optionalToOptional(
    Schema.Unknown.pipe(Schema.filter((value) => !refuses(value) || message)),
    Schema.Never,
    { decode: Option.none, encode: Option.none }
  ))

// A key set to `undefined` is a key not given (a TS caller's `{ timeoutMs: undefined }`).
const argumentRecord = (raw: unknown): Record<string, unknown> =>
  Predicate.isRecord(raw) ? Object.fromEntries(Object.entries(raw).filter(([, value]) => value !== undefined)) : {}

const jsonSchemaOf = (fields: Schema.Struct.Fields): AgentTools.JsonSchema => {
  if (Object.keys(fields).length === 0) return { type: "object", properties: {}, additionalProperties: false }
  const { $schema: _, ...schema } = JSONSchema.make(Schema.Struct(fields)) as unknown as AgentTools.JsonSchema & {
    readonly $schema?: string
  }
  return schema
}

/**
 * Fields checked together as one step, after every other field (e.g. a pair that is both or neither):
 * `rule` reads their raw values first, then each field's own checks run in `checkOrder`. They are
 * published after the other fields, in the order of `fields`.
 */
export interface Composite<Fields extends Schema.Struct.Fields> {
  readonly fields: Fields
  readonly rule: (values: { readonly [K in keyof Fields]?: unknown }) => string | undefined
  readonly checkOrder: ReadonlyArray<keyof Fields & string>
}

/**
 * A {@link Composite}.
 */
export const composite = <Fields extends Schema.Struct.Fields>(
  fields: Fields,
  rule: Composite<Fields>["rule"],
  checkOrder: Composite<Fields>["checkOrder"]
): Composite<Fields> => ({ fields, rule, checkOrder })

// The composite as one schema over the raw record: its keys as given, the rule, then its fields.
const compositeSchema = <Fields extends Schema.Struct.Fields>(composite: Composite<Fields>) => {
  const keys = Object.keys(composite.fields) as ReadonlyArray<keyof Fields & string>
  const raw = Schema.Struct(Object.fromEntries(keys.map((key) => [key, optional(Schema.Unknown)])))
  // The same entries in another key order: a struct checks its fields in key order.
  const ordered = Object.fromEntries(
    [...composite.checkOrder, ...keys.filter((key) => !composite.checkOrder.includes(key))].map((key) => [
      key,
      composite.fields[key]
    ])
  ) as Schema.Struct.Fields as Fields
  return Schema.compose(raw.pipe(Schema.filter((values) => composite.rule(values))), Schema.Struct(ordered), {
    strict: false
  })
}

const failure = (error: ParseResult.ParseError): ToolError =>
  new ToolError({ message: ParseResult.ArrayFormatter.formatErrorSync(error)[0]?.message ?? error.message })

/**
 * The parameters of a tool from its fields, in the order they are checked, and optionally a
 * {@link Composite} checked last. The JSON Schema is that of the same fields, less the unadvertised
 * ones.
 */
export function parameters<Fields extends Schema.Struct.Fields>(fields: Fields): Parameters<Schema.Struct.Type<Fields>>
export function parameters<Fields extends Schema.Struct.Fields, Last extends Schema.Struct.Fields>(
  fields: Fields,
  composite: Composite<Last>
): Parameters<Schema.Struct.Type<Fields> & Schema.Struct.Type<Last>>
export function parameters<Fields extends Schema.Struct.Fields, Last extends Schema.Struct.Fields>(
  fields: Fields,
  composite?: Composite<Last>
) {
  const decodeFields = Schema.decodeUnknown(Schema.Struct(fields))
  const decodeLast = composite === undefined ? undefined : Schema.decodeUnknown(compositeSchema(composite))
  const published = { ...fields, ...composite?.fields }
  let jsonSchema: AgentTools.JsonSchema | undefined
  return {
    // Made when first read: a call that no model chose (the CLI's `run`) never publishes it.
    get jsonSchema() {
      return jsonSchema ??= jsonSchemaOf(
        Object.fromEntries(Object.entries(published).filter(([, field]) => !isUnadvertised(field)))
      )
    },
    decode: (raw: unknown) => {
      const record = argumentRecord(raw)
      const args = decodeLast === undefined
        ? decodeFields(record)
        : Effect.zipWith(decodeFields(record), decodeLast(record), (args, last) => ({ ...args, ...last }))
      return Effect.mapError(args, failure)
    }
  }
}

/**
 * A field's base schema, described for the model, whose own failure (a value of another type) reads
 * `message(actual)` instead of Effect's message. Checks piped after it return their own messages.
 */
export const expecting = <S extends Schema.Annotable<S, any, any, never>>(
  schema: S,
  description: string,
  message: (actual: unknown) => string
): S =>
  schema.annotations({
    description,
    message: (issue: ParseResult.ParseIssue) => ({ message: message(issue.actual), override: true })
  })

/**
 * A required field: a missing key reads like an absent value, `message(undefined)`.
 */
export const required = <S extends Schema.Schema.All>(schema: S, message: (actual: unknown) => string) =>
  Schema.propertySignature(schema).annotations({ missingMessage: () => message(undefined) })

/**
 * An optional field: absent, or checked like a present one.
 */
export const optional = <S extends Schema.Schema.All>(schema: S) => Schema.optionalWith(schema, { exact: true })

/**
 * A service's failure as the call's error, keeping its message (`unknown task bash-9`).
 */
export const failWith = (error: { readonly message: string }): ToolError => new ToolError({ message: error.message })

/**
 * A string with something other than white space in it.
 */
export const isNonBlank = (value: string): boolean => value.trim().length > 0

/**
 * A positive finite number.
 */
export const isPositive = (value: number): boolean => Number.isFinite(value) && value > 0
