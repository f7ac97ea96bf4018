/**
 * The parameters of a tool in the shape OpenAI's strict function calling accepts (the default of
 * `@effect/ai-openai`): every object lists all its properties in `required` and has
 * `additionalProperties: false`, and a property that was optional accepts `null` instead, which the
 * toolkit reads as "not given" before the tool checks its arguments.
 */
import * as Predicate from "effect/Predicate"
import type { AgentTools } from "../../services/AgentTools.js"

type JsonObject = { readonly [key: string]: unknown }

// A property that may be left out becomes one that may be null: `["number", "null"]` (an enum also
// lists `null`), or `anyOf` with null for a schema without a single type.
const nullable = (schema: JsonObject): JsonObject => {
  if (typeof schema.type === "string") {
    return {
      ...schema,
      type: [schema.type, "null"],
      ...(Array.isArray(schema.enum) ? { enum: [...schema.enum, null] } : {})
    }
  }
  if (Array.isArray(schema.anyOf)) return { ...schema, anyOf: [...schema.anyOf, { type: "null" }] }
  const { description, ...rest } = schema
  return { ...(description === undefined ? {} : { description }), anyOf: [rest, { type: "null" }] }
}

const strictValue = (schema: unknown): unknown => {
  if (!Predicate.isRecord(schema)) return schema
  if (schema.type === "object") return strictObject(schema)
  if (schema.type === "array" && schema.items !== undefined) return { ...schema, items: strictValue(schema.items) }
  return schema
}

const strictObject = (schema: JsonObject): JsonObject => {
  const properties = Predicate.isRecord(schema.properties) ? schema.properties : {}
  const required = new Set(Array.isArray(schema.required) ? schema.required : [])
  return {
    ...schema,
    properties: Object.fromEntries(
      Object.entries(properties).map(([key, value]) => {
        const strict = strictValue(value)
        return [key, required.has(key) || !Predicate.isRecord(strict) ? strict : nullable(strict)]
      })
    ),
    required: Object.keys(properties),
    additionalProperties: false
  }
}

/**
 * `schema` valid in strict mode: each object requires all its properties, the optional ones nullable,
 * and allows no others.
 */
export const strictJsonSchema = (schema: AgentTools.JsonSchema): AgentTools.JsonSchema =>
  strictObject(schema) as AgentTools.JsonSchema

/**
 * Arguments written against {@link strictJsonSchema}`(schema)` as the tool reads them: a top-level key
 * that `schema` leaves optional and the model set to `null` is a key not given. Anything else, a
 * `null` for a required key included, is passed on, so the tool's checks answer it with their messages.
 */
export const nullsAsAbsent = (schema: AgentTools.JsonSchema) => {
  const required = new Set(schema.required ?? [])
  const optional = new Set(Object.keys(schema.properties).filter((key) => !required.has(key)))
  return (params: unknown): unknown =>
    Predicate.isRecord(params)
      ? Object.fromEntries(Object.entries(params).filter(([key, value]) => !(value === null && optional.has(key))))
      : params
}
