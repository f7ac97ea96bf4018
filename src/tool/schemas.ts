/**
 * The tools' parameter schemas. Each property is declared to the model with its real type and
 * description, but decoded as `unknown`: the handlers validate, so the model always reads our exact
 * messages (NOTES: a schema failure would never reach it). Undeclared keys are dropped on decode.
 *
 * @since 0.1.0
 */
import { JSONSchema, Schema } from "effect"
import type { JsonSchemaObject } from "../services/AgentTools.js"
import { bashParameterDescriptions, taskToolDescriptions } from "./descriptions.js"
import { escalationTargets } from "./validateBashArgs.js"

/**
 * A property that advertises `typed` (its JSON Schema) but accepts anything.
 *
 * @since 0.1.0
 */
export const loose = (typed: Schema.Schema.Any): Schema.Schema<unknown> => {
  const { $schema: _, ...jsonSchema } = JSONSchema.make(typed)
  return Schema.Unknown.annotations({ jsonSchema })
}

const optional = (typed: Schema.Schema.Any) => Schema.optionalWith(loose(typed), { exact: true })

const described = <S extends Schema.Schema.Any>(schema: S, description: string) =>
  schema.annotations({ description })

/**
 * The loose fields of any tool: required and optional properties of unknown type.
 *
 * @since 0.1.0
 */
export type LooseFields = Record<string, Schema.Schema<unknown> | Schema.optionalWith<Schema.Schema<unknown>, { exact: true }>>

/**
 * `bash` parameters for a composition: `run_in_background` only with background support,
 * `sandbox_permissions` + `justification` only with a confining executor.
 *
 * @since 0.1.0
 */
export const bashFields = (options: { readonly background: boolean; readonly sandbox: boolean }): LooseFields => ({
  command: loose(described(Schema.String, bashParameterDescriptions.command)),
  description: loose(described(Schema.String, bashParameterDescriptions.description)),
  timeoutMs: optional(described(Schema.Number, bashParameterDescriptions.timeoutMs)),
  workdir: optional(described(Schema.String, bashParameterDescriptions.workdir)),
  ...(options.background
    ? { run_in_background: optional(described(Schema.Boolean, bashParameterDescriptions.run_in_background)) }
    : {}),
  ...(options.sandbox
    ? {
      sandbox_permissions: optional(
        described(Schema.Literal(...escalationTargets), bashParameterDescriptions.sandbox_permissions)
      ),
      justification: optional(described(Schema.String, bashParameterDescriptions.justification))
    }
    : {})
})

/**
 * `task_output { task_id, wait?, timeout_ms? }`.
 *
 * @since 0.1.0
 */
export const taskOutputFields: LooseFields = {
  task_id: loose(described(Schema.String, taskToolDescriptions.task_id)),
  wait: optional(described(Schema.Boolean, taskToolDescriptions.wait)),
  timeout_ms: optional(described(Schema.Number, taskToolDescriptions.timeout_ms))
}

/**
 * `task_list {}`.
 *
 * @since 0.1.0
 */
export const taskListFields: LooseFields = {}

/**
 * `task_kill { task_id, reason? }`.
 *
 * @since 0.1.0
 */
export const taskKillFields: LooseFields = {
  task_id: loose(described(Schema.String, taskToolDescriptions.task_id)),
  reason: optional(described(Schema.String, taskToolDescriptions.reason))
}

/**
 * Every argument key each tool reads, whatever the composition advertises: a host that decodes
 * before calling (an `@effect/ai` toolkit) must keep them, so a forced `run_in_background` or an
 * unadvertised `sandbox_permissions` still meets its exact refusal.
 *
 * @since 0.1.0
 */
export const argumentKeys: Readonly<Record<string, ReadonlyArray<string>>> = {
  bash: Object.keys(bashFields({ background: true, sandbox: true })),
  task_output: Object.keys(taskOutputFields),
  task_list: Object.keys(taskListFields),
  task_kill: Object.keys(taskKillFields)
}

/**
 * The JSON Schema published for a set of fields; an empty set is still `{ "type": "object" }`.
 *
 * @since 0.1.0
 */
export const parametersOf = (fields: LooseFields): JsonSchemaObject => {
  if (Object.keys(fields).length === 0) return { type: "object", properties: {}, additionalProperties: false }
  const { $schema: _, ...schema } = JSONSchema.make(Schema.Struct(fields)) as unknown as JsonSchemaObject & {
    readonly $schema?: string
  }
  return schema
}
