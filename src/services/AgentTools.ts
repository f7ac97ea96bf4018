/**
 * The host-neutral face of the tools: what every host (an `@effect/ai` toolkit, the Cordis adapter,
 * the MCP server, the CLI) needs to publish and call `bash`, `task_output`, `task_list`, `task_kill`.
 */
import type * as Effect from "effect/Effect"
import * as Context from "effect/Context"
import * as Schema from "effect/Schema"
import type { ToolSession } from "./ToolExecution.js"

/**
 * A tool call that produced no value: bad input, a refused escalation, an infrastructure fault, an
 * abort. `message` is the exact contract text; hosts render it as `Error: <message>`.
 *
 * @since 0.1.0
 * @category errors
 */
export class ToolError extends Schema.TaggedError<ToolError>()("ToolError", {
  message: Schema.String
}) {}

/**
 * The composed tools, ready for a host: typed by tool name for code that names a tool
 * (`call("bash", …)`), untyped for hosts that get the name from the wire (`callUnknown`).
 *
 * @since 0.1.0
 * @category tags
 */
export class AgentTools extends Context.Tag("effect-bash/AgentTools")<
  AgentTools,
  {
    /** `bash`, then the task tools when a task runtime is composed. */
    readonly tools: ReadonlyArray<AgentTools.Descriptor>
    readonly promptSections: ReadonlyArray<AgentTools.PromptSection>
    /**
     * Runs the named tool. The arguments are checked again as the model's would be (unknown keys
     * dropped, the exact message of the first failing check); never fails: errors become
     * `{ isError: true, text: "Error: <message>" }`. A tool that is not composed (a task tool
     * without a task runtime) answers `unknown tool "<name>"`.
     */
    readonly call: <N extends AgentTools.Name>(
      name: N,
      args: AgentTools.Parameters<N>,
      context: AgentTools.CallContext
    ) => Effect.Effect<AgentTools.Result<AgentTools.Value<N>>>
    /** `call` for a name and arguments from the wire (MCP, Cordis, `@effect/ai`). */
    readonly callUnknown: (
      name: string,
      args: unknown,
      context: AgentTools.CallContext
    ) => Effect.Effect<AgentTools.Result>
    /**
     * Takes the completion notices (`background task <id> (...) finished [status: ...]. Read its
     * output with task_output.`) of a session's finished tasks, each once; `undefined` takes those of
     * session-less tasks. A notice is dropped once a tool result has shown that task's final status.
     * Hosts deliver them as messages of their own after a result or between turns.
     */
    readonly takeNotices: (session: string | undefined) => Effect.Effect<ReadonlyArray<string>>
  }
>() {}

/**
 * The types of the {@link AgentTools} service.
 *
 * @since 0.1.0
 * @category models
 */
export declare namespace AgentTools {
  /**
   * Every tool by name, with the arguments it takes and the value it returns
   * (`readonly bash: { parameters; value }`). The implementation that composes the tools
   * (`AgentToolsLive`) fills it in from the tools' own Schemas.
   *
   * @since 0.1.0
   * @category models
   */
  export interface Registry {}

  /**
   * A tool's name: `"bash"`, `"task_output"`, `"task_list"` or `"task_kill"`.
   *
   * @since 0.1.0
   * @category models
   */
  export type Name = keyof Registry & string

  /**
   * The arguments of the named tool, as a caller writes them (the model's JSON has the same shape).
   *
   * @since 0.1.0
   * @category models
   */
  export type Parameters<N extends Name> = Registry[N] extends { readonly parameters: infer P } ? P : never

  /**
   * The canonical value of the named tool's successful call: what hosts store and replay.
   *
   * @since 0.1.0
   * @category models
   */
  export type Value<N extends Name> = Registry[N] extends { readonly value: infer V } ? V : never

  /**
   * A JSON Schema object describing a tool's parameters (always `{ type: "object", ... }`).
   *
   * @since 0.1.0
   * @category models
   */
  export interface JsonSchema {
    readonly type: "object"
    readonly properties: Readonly<Record<string, unknown>>
    readonly required?: ReadonlyArray<string>
    readonly [key: string]: unknown
  }

  /**
   * Receives each progress update: the new output since the previous one.
   *
   * @since 0.1.0
   * @category models
   */
  export type ProgressCallback = (text: string) => Effect.Effect<void>

  /**
   * The calling context of one tool call. A call is aborted by interrupting its fiber: a foreground
   * command is killed, an approval prompt withdrawn, a wait ended (a started background task runs on),
   * and the call is recorded as the error `command aborted`. Hosts that cancel with an `AbortSignal`
   * turn it into interruption at their edge (the Cordis and MCP adapters answer `command aborted`).
   *
   * @since 0.1.0
   * @category models
   */
  export interface CallContext {
    readonly callId: string
    readonly session?: ToolSession
    /**
     * Receives a foreground `bash` call's output while it runs: new complete lines cleaned like model
     * text, at most one update per 100 ms (Clock) and a last one at the end. The result is unchanged;
     * it comes once the last update has been delivered, or 1 s (Clock) after the run has ended when the
     * callback blocks.
     */
    readonly onProgress?: ProgressCallback
  }

  /**
   * A UI card for a call or its result; pure, so replays present the same card.
   *
   * @since 0.1.0
   * @category models
   */
  export type Presentation =
    | {
      readonly kind: "terminal"
      readonly title: string
      readonly description?: string
      readonly cwd?: string
      readonly output?: string
      readonly exitCode?: number | null
      readonly signal?: string | null
      readonly timedOut?: boolean
    }
    | { readonly kind: "execute"; readonly title: string; readonly description?: string; readonly detail?: string }

  /**
   * One published tool, as a host that speaks JSON sees it: values arrive from storage or the wire,
   * so `render` and `presentResult` decode them with the tool's value schema first.
   *
   * @since 0.1.0
   * @category models
   */
  export interface Descriptor {
    readonly name: string
    readonly description: string
    /** The JSON Schema the model reads, derived from the tool's parameter schema. */
    readonly parameters: JsonSchema
    /** The Schema of the tool's canonical value (`AgentTools.Value` of its name). */
    readonly success: Schema.Schema.AnyNoContext
    /** The model-facing text of a successful value (the reference tool's text, character for character). */
    readonly render: (value: unknown) => string
    readonly presentCall: (args: unknown) => Presentation
    /** From the stored structured value, never from parsing text. */
    readonly presentResult: (args: unknown, value: unknown) => Presentation
  }

  /**
   * A prompt section a host adds to its system prompt.
   *
   * @since 0.1.0
   * @category models
   */
  export interface PromptSection {
    readonly name: string
    readonly order: number
    readonly text: string
  }

  /**
   * The outcome of a call: what the model sees, and the canonical value.
   *
   * @since 0.1.0
   * @category models
   */
  export type Result<A = unknown> =
    | { readonly isError: false; readonly value: A; readonly text: string }
    | { readonly isError: true; readonly message: string; readonly text: string }
}
