/**
 * The tools as an `@effect/ai` toolkit for an Effect agent: one Layer that maps the composed
 * {@link AgentTools} to `Tool`s with handlers, ready for `LanguageModel.generateText({ toolkit })`.
 *
 * Each tool publishes the JSON Schema of its {@link AgentTools} descriptor (so parameters follow the
 * composition), by default in the shape OpenAI's strict function calling requires (every property
 * required, an optional one nullable, `null` read as not given; see {@link Options}), but lets every
 * argument through: `AgentTools` decodes them, and an invalid one comes back to the model as a failure
 * result (failure mode `"return"`) carrying the exact message, instead of an `AiError` that would end
 * the turn.
 *
 * A successful result is typed by the tool: an {@link Output} holding the tool's structured value
 * (its `AgentTools.Value`, checked against the value Schema it publishes) and the text the model
 * reads. `@effect/ai` sends a result's encoded form to the model, and the success Schema encodes an
 * Output to exactly that text; the value never reaches the model.
 *
 * @since 0.1.0
 */
import * as NodeCrypto from "node:crypto"
import * as Tool from "@effect/ai/Tool"
import * as Toolkit from "@effect/ai/Toolkit"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as ParseResult from "effect/ParseResult"
import * as Ref from "effect/Ref"
import * as Schema from "effect/Schema"
import { AgentTools, ToolError } from "../services/AgentTools.js"
import { CurrentToolSession } from "../services/CurrentToolSession.js"
import { nullsAsAbsent, strictJsonSchema } from "./internal/strictSchema.js"

// Any object: every key is kept for AgentTools to decode.
const LooseParameters = Schema.Struct({}, { key: Schema.String, value: Schema.Unknown })
type LooseParameters = typeof LooseParameters

/**
 * A successful call as an `@effect/ai` user reads it: the tool's canonical value, and `text`, exactly
 * what the model reads (the tool's render, then any completion notices).
 *
 * @since 0.1.0
 * @category models
 */
export interface Output<Value> {
  readonly value: Value
  readonly text: string
}

/**
 * One of the tools (`BashAiTool<"bash">`; without a name, any of them): loose parameters; on success
 * an {@link Output} of the tool's value, whose encoded form is the model text; a {@link ToolError}
 * returned to the model on failure.
 *
 * @since 0.1.0
 * @category models
 */
export type BashAiTool<N extends AgentTools.Name = AgentTools.Name> = N extends AgentTools.Name ? Tool.Tool<N, {
    readonly parameters: LooseParameters
    readonly success: Schema.Schema<Output<AgentTools.Value<N>>, string>
    readonly failure: typeof ToolError
    readonly failureMode: "return"
  }>
  : never

/**
 * The tools by name, so `handle("bash", …)` and a response's tool-result parts are typed per tool.
 * Which tools exist is the composition's choice: `tools` holds the task tools only when a task runtime
 * is composed, and `handle` of an absent one fails with an `AiError`.
 *
 * @since 0.1.0
 * @category models
 */
export type BashAiTools = { readonly [N in AgentTools.Name]: BashAiTool<N> }

/**
 * The toolkit with its handlers, as `generateText` takes it.
 *
 * @since 0.1.0
 * @category models
 */
export type BashToolkitWithHandler = Toolkit.WithHandler<BashAiTools>

/**
 * The success Schema of a tool: Type an {@link Output}, Encoded its `text`. `@effect/ai` checks a
 * handler's result against the Type (so the value against the tool's value Schema) and hands the
 * encoded form to the model, so the model reads `text`, character for character, while `result` in
 * `toolkit.handle` and in a response's tool-result parts is the Output. A struct of both rather than
 * a transformation of the value alone: the text also carries completion notices, which are not part
 * of the value. One-way: a text does not decode back into a value, and decoding fails saying so.
 */
const outputOf = (name: string, value: Schema.Schema.AnyNoContext) =>
  Schema.transformOrFail(Schema.String, Schema.Struct({ value: Schema.typeSchema(value), text: Schema.String }), {
    strict: true,
    decode: (text, _, ast) =>
      ParseResult.fail(
        new ParseResult.Forbidden(ast, text, `the model text of a ${name} result does not decode back into its value`)
      ),
    encode: (output) => ParseResult.succeed(output.text)
  }).annotations({ identifier: `Output(${name})` })

const toAiTool = (descriptor: AgentTools.Descriptor, jsonSchema: AgentTools.JsonSchema) =>
  Tool.make(descriptor.name, {
    description: descriptor.description,
    success: outputOf(descriptor.name, descriptor.success),
    failure: ToolError,
    failureMode: "return"
  }).setParameters(LooseParameters.annotations({ jsonSchema }))

// Each notice is a paragraph of its own: exactly one blank line before it, whether or not the
// result already ends in a newline.
const withNotices = (text: string, notices: ReadonlyArray<string>): string =>
  notices.length === 0 ? text : `${text}${text.endsWith("\n") ? "\n" : "\n\n"}${notices.join("\n\n")}`

/**
 * The composed tools as a ready `@effect/ai` toolkit. `yield* BashToolkit.BashToolkit` gives the
 * toolkit; as an Effect it can also be passed directly:
 * `generateText({ prompt, toolkit: BashToolkit.BashToolkit })`.
 *
 * @since 0.1.0
 * @category tags
 */
export class BashToolkit extends Context.Tag("effect-bash/BashToolkit")<BashToolkit, BashToolkitWithHandler>() {}

/**
 * How the toolkit publishes its parameters.
 *
 * @since 0.2.0
 * @category models
 */
export interface Options {
  /**
   * `true` (the default): each tool's JSON Schema is valid for OpenAI's strict function calling, which
   * `@effect/ai-openai` turns on for every tool unless told otherwise: every property is listed in
   * `required`, an optional one accepts `null` (`"type": ["number", "null"]`), and
   * `additionalProperties` is `false`. The model then sends every key, `null` for one it leaves out,
   * and the toolkit reads a `null` there as the key not given; any other value is checked as usual.
   * `false`: exactly the schemas of {@link AgentTools} (and of the MCP server), optional keys left out
   * of `required`, for a provider that does not accept nullable types; a `null` is then a wrong value.
   */
  readonly strict?: boolean
}

/**
 * Builds the toolkit from {@link AgentTools}: `bash`, and the task tools when composed, each
 * handler calling the tool under a fresh call id.
 *
 * @since 0.2.0
 * @category constructors
 */
export const makeWith = (options: Options = {}): Effect.Effect<BashToolkitWithHandler, never, AgentTools> =>
  Effect.gen(function*() {
    const tools = yield* AgentTools
    const strict = options.strict ?? true
    const calls = yield* Ref.make(0)
    // @effect/ai hands a handler no call id. A per-toolkit prefix keeps ids unique across restarts,
    // so records appended to one session file never share a call id.
    const prefix = `effect-ai-${NodeCrypto.randomUUID().slice(0, 8)}`
    const toolkit = Toolkit.make(
      ...tools.tools.map((tool) => toAiTool(tool, strict ? strictJsonSchema(tool.parameters) : tool.parameters))
    )
    const handlerFor = (descriptor: AgentTools.Descriptor) => {
      const argumentsOf = strict ? nullsAsAbsent(descriptor.parameters) : (params: unknown) => params
      return Effect.fn("BashToolkit.handle")(function*(params: unknown) {
        const session = yield* Effect.serviceOption(CurrentToolSession)
        const callId = `${prefix}-${yield* Ref.updateAndGet(calls, (n) => n + 1)}`
        const result = yield* tools.callUnknown(descriptor.name, argumentsOf(params), {
          callId,
          ...(Option.isSome(session) ? { session: session.value } : {})
        })
        if (result.isError) return yield* new ToolError({ message: result.message })
        // Completion notices of the session's finished background tasks follow the text.
        const notices = yield* tools.takeNotices(Option.getOrUndefined(session)?.id)
        return { value: result.value, text: withNotices(result.text, notices) }
      })
    }
    const handlers = Object.fromEntries(tools.tools.map((descriptor) => [descriptor.name, handlerFor(descriptor)]))
    const context = yield* toolkit.toContext(handlers)
    const built = yield* Effect.provide(toolkit, context)
    // Typed by name from the Registry: each tool's success Schema is built from its descriptor's value
    // Schema, the one the Registry types that name with.
    return built as unknown as BashToolkitWithHandler
  })

/**
 * {@link makeWith} with the default {@link Options}: strict-mode schemas.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make: Effect.Effect<BashToolkitWithHandler, never, AgentTools> = makeWith()

/**
 * {@link BashToolkit} over the composed {@link AgentTools}, its schemas as `options` say.
 *
 * @since 0.2.0
 * @category layers
 */
export const layerWith = (options: Options): Layer.Layer<BashToolkit, never, AgentTools> =>
  Layer.effect(BashToolkit, makeWith(options))

/**
 * {@link BashToolkit} over the composed {@link AgentTools}, with strict-mode schemas
 * (`layerWith({ strict: false })` publishes the plain ones).
 *
 * @since 0.1.0
 * @category layers
 */
export const layer: Layer.Layer<BashToolkit, never, AgentTools> = Layer.effect(BashToolkit, make)
