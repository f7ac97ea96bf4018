/**
 * Our tools publish JSON Schema (from `effect/Schema`); the harness speaks a smaller dialect — a
 * parameter map `{ prop: { type, description, enum, required: true } }` compiled to the subset its
 * registry, Code Mode SDK generator and providers accept (type/oneOf/properties/required/
 * additionalProperties/items/enum/const + annotations). This file converts the first into the second.
 * Validation keywords the subset lacks (`minLength`, `minimum`, …) are dropped: the tool handler
 * validates every call itself, so the model still sees our exact messages.
 */
import type { AgentTools } from "../../services/AgentTools.js"

type Json = null | boolean | number | string | ReadonlyArray<Json> | { readonly [key: string]: Json }
type Node = Readonly<Record<string, unknown>>

/**
 * One value schema of the harness's DSL.
 */
export type HarnessValueSpec = { readonly [key: string]: unknown }

/**
 * The harness's parameter map: property name → value schema (plus `required: true`).
 */
export type HarnessParameterMap = Readonly<Record<string, HarnessValueSpec>>

const annotationKeys = ["description", "title", "default", "examples"] as const
const scalarTypes = ["string", "number", "integer", "boolean", "null"] as const
const valueTypes: ReadonlyArray<string> = [...scalarTypes, "array", "object"]

const isNode = (value: unknown): value is Node => typeof value === "object" && value !== null && !Array.isArray(value)

const isJson = (value: unknown): value is Json => {
  try {
    return JSON.stringify(value) !== undefined && typeof value !== "function"
  } catch {
    return false
  }
}

const annotationsOf = (node: Node): Record<string, unknown> => {
  const out: Record<string, unknown> = {}
  for (const key of annotationKeys) {
    const value = node[key]
    if (value === undefined || !isJson(value)) continue
    if ((key === "description" || key === "title") && typeof value !== "string") continue
    out[key] = value
  }
  return out
}

const scalarTypeOf = (value: unknown): string | undefined =>
  value === null
    ? "null"
    : typeof value === "string" || typeof value === "boolean"
    ? typeof value
    : typeof value === "number"
    ? "number"
    : undefined

/** The literal values a node admits when it is nothing but literals (`const`, `enum`, unions of them). */
const literalsOf = (node: Node): ReadonlyArray<unknown> | undefined => {
  if ("const" in node) return [node["const"]]
  if (Array.isArray(node["enum"])) return node["enum"]
  const branches = node["anyOf"] ?? node["oneOf"]
  if (!Array.isArray(branches)) return undefined
  const all: Array<unknown> = []
  for (const branch of branches) {
    const literals = isNode(branch) ? literalsOf(branch) : undefined
    if (literals === undefined) return undefined
    all.push(...literals)
  }
  return all
}

const toValueSpec = (node: unknown): HarnessValueSpec => {
  if (!isNode(node)) return { type: "json" }
  const annotations = annotationsOf(node)
  const literals = literalsOf(node)
  if (literals !== undefined && literals.length > 0) {
    const types = new Set(literals.map(scalarTypeOf))
    const [type] = types
    if (types.size === 1 && type !== undefined) {
      return literals.length === 1
        ? { type, ...annotations, const: literals[0] }
        : { type, ...annotations, enum: [...new Set(literals)] }
    }
  }
  const branches = node["anyOf"] ?? node["oneOf"]
  if (Array.isArray(branches)) {
    if (branches.length === 1) return { ...toValueSpec(branches[0]), ...annotations }
    if (branches.length > 1) return { ...annotations, oneOf: branches.map(toValueSpec) }
  }
  const type = node["type"]
  if (Array.isArray(type)) {
    const types = type.filter((t): t is string => typeof t === "string" && valueTypes.includes(t))
    if (types.length === 1) return toValueSpec({ ...node, type: types[0] })
    if (types.length > 1) return { ...annotations, oneOf: types.map((t) => toValueSpec({ ...node, type: t })) }
  }
  switch (type) {
    case "string":
    case "number":
    case "integer":
    case "boolean":
    case "null":
      return { type, ...annotations }
    case "array":
      return { type, ...annotations, ...("items" in node && isNode(node["items"]) ? { items: toValueSpec(node["items"]) } : {}) }
    case "object":
      return {
        type,
        ...annotations,
        ...(isNode(node["properties"]) ? { properties: toParameterMapOf(node["properties"], node["required"]) } : {}),
        additionalProperties: node["additionalProperties"] !== false
      }
    default:
      return { type: "json", ...annotations }
  }
}

const toParameterMapOf = (properties: Node, required: unknown): HarnessParameterMap => {
  const requiredNames = new Set(Array.isArray(required) ? required : [])
  const map: Record<string, HarnessValueSpec> = {}
  for (const [name, schema] of Object.entries(properties)) {
    map[name] = requiredNames.has(name) ? { ...toValueSpec(schema), required: true } : toValueSpec(schema)
  }
  return map
}

/**
 * The harness parameter map equivalent to a tool's JSON Schema parameters.
 */
export const toHarnessParameterMap = (parameters: AgentTools.JsonSchema): HarnessParameterMap =>
  toParameterMapOf(parameters.properties, parameters.required)

const compileValue = (spec: HarnessValueSpec): Record<string, unknown> => {
  const { required: _required, properties, items, oneOf, type, ...rest } = spec
  // `json` is the DSL's unconstrained node: it compiles to annotations only.
  const node: Record<string, unknown> = type === undefined || type === "json" ? rest : { type, ...rest }
  if (Array.isArray(oneOf)) node["oneOf"] = oneOf.map(compileValue)
  if (isNode(items)) node["items"] = compileValue(items)
  if (isNode(properties)) Object.assign(node, compileMap(properties as HarnessParameterMap))
  return node
}

const compileMap = (map: HarnessParameterMap): { properties: Record<string, unknown>; required?: Array<string> } => {
  const properties: Record<string, unknown> = {}
  const required: Array<string> = []
  for (const [name, spec] of Object.entries(map)) {
    properties[name] = compileValue(spec)
    if (spec["required"] === true) required.push(name)
  }
  return required.length > 0 ? { properties, required } : { properties }
}

/**
 * Compiles a parameter map to the raw JSON Schema the harness registry publishes — the same shape
 * its `parameterSchemaSpecToJsonSchema` produces (an open object root).
 */
export const compileHarnessParameters = (map: HarnessParameterMap): Record<string, unknown> => ({
  type: "object",
  ...compileMap(map)
})

/**
 * A tool's JSON Schema parameters, in the harness's supported subset.
 */
export const toHarnessParameters = (parameters: AgentTools.JsonSchema): Record<string, unknown> =>
  compileHarnessParameters(toHarnessParameterMap(parameters))
