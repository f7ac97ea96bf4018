/**
 * The tools as an `@effect/ai` toolkit for an Effect agent: one Layer that maps the composed
 * {@link AgentTools} to `Tool`s with handlers, ready for `LanguageModel.generateText({ toolkit })`.
 *
 * Each tool publishes exactly the JSON Schema of its {@link AgentTools} descriptor (so parameters
 * follow the composition) but lets every argument through: `AgentTools` decodes them, and an invalid
 * one comes back to the model as a failure result (failure mode `"return"`) carrying the exact
 * message, instead of an `AiError` that would end the turn.
 *
 * @since 0.1.0
 */
import * as NodeCrypto from "node:crypto"
import * as Tool from "@effect/ai/Tool"
import * as Toolkit from "@effect/ai/Toolkit"
import { Context, Effect, Layer, Option, Ref, Schema } from "effect"
import { AgentTools, ToolError } from "../services/AgentTools.js"
import { CurrentToolSession } from "../services/CurrentToolSession.js"

// Any object: every key is kept for AgentTools to decode.
const LooseParameters = Schema.Struct({}, { key: Schema.String, value: Schema.Unknown })
type LooseParameters = typeof LooseParameters

/**
 * One of the tools: loose parameters, the rendered text on success, a {@link ToolError} returned
 * to the model on failure.
 *
 * @since 0.1.0
 * @category models
 */
export type BashAiTool = Tool.Tool<string, {
  readonly parameters: LooseParameters
  readonly success: typeof Schema.String
  readonly failure: typeof ToolError
  readonly failureMode: "return"
}>

/**
 * The toolkit with its handlers, as `generateText` takes it.
 *
 * @since 0.1.0
 * @category models
 */
export type BashToolkitWithHandler = Toolkit.WithHandler<Record<string, BashAiTool>>

const toAiTool = (descriptor: AgentTools.Descriptor): BashAiTool =>
  Tool.make(descriptor.name, {
    description: descriptor.description,
    success: Schema.String,
    failure: ToolError,
    failureMode: "return"
  }).setParameters(LooseParameters.annotations({ jsonSchema: descriptor.parameters }))

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
 * Builds the toolkit from {@link AgentTools}: `bash`, and the task tools when composed, each
 * handler calling the tool under a fresh call id.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make: Effect.Effect<BashToolkitWithHandler, never, AgentTools> = Effect.gen(function*() {
  const tools = yield* AgentTools
  const calls = yield* Ref.make(0)
  // @effect/ai hands a handler no call id. A per-toolkit prefix keeps ids unique across restarts,
  // so records appended to one session file never share a call id.
  const prefix = `effect-ai-${NodeCrypto.randomUUID().slice(0, 8)}`
  const toolkit: Toolkit.Toolkit<Record<string, BashAiTool>> = Toolkit.make(...tools.tools.map(toAiTool))
  const handlerFor = (name: string) =>
    Effect.fn("BashToolkit.handle")(function*(params: unknown) {
      const session = yield* Effect.serviceOption(CurrentToolSession)
      const callId = `${prefix}-${yield* Ref.updateAndGet(calls, (n) => n + 1)}`
      const result = yield* tools.callUnknown(name, params, {
        callId,
        ...(Option.isSome(session) ? { session: session.value } : {})
      })
      if (result.isError) return yield* new ToolError({ message: result.message })
      // Completion notices of the session's finished background tasks follow the text.
      return withNotices(result.text, yield* tools.takeNotices(Option.getOrUndefined(session)?.id))
    })
  const handlers = Object.fromEntries(tools.tools.map(({ name }) => [name, handlerFor(name)]))
  const context = yield* toolkit.toContext(handlers)
  return yield* Effect.provide(toolkit, context)
})

/**
 * {@link BashToolkit} over the composed {@link AgentTools}.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer: Layer.Layer<BashToolkit, never, AgentTools> = Layer.effect(BashToolkit, make)
