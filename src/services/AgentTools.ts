/**
 * The host-neutral face of the tools: what every host (an `@effect/ai` toolkit, the Cordis adapter,
 * the MCP server, the CLI) needs to publish and call `bash`, `task_output`, `task_list`, `task_kill`.
 *
 * @since 0.1.0
 */
import type { Effect } from "effect"
import { Context, Schema } from "effect"
import type { ToolSession } from "./ToolExecution.js"

/**
 * A JSON Schema object describing a tool's parameters (always `{ type: "object", ... }`).
 *
 * @since 0.1.0
 */
export interface JsonSchemaObject {
  readonly type: "object"
  readonly properties: Readonly<Record<string, unknown>>
  readonly required?: ReadonlyArray<string>
  readonly [key: string]: unknown
}

/**
 * Receives each progress update: the new output since the previous one.
 *
 * @since 0.1.0
 */
export type ProgressCallback = (text: string) => Effect.Effect<void>

/**
 * The calling context of one tool call. A call is aborted by interrupting its fiber: a foreground
 * command is killed, an approval prompt withdrawn, a wait ended (a started background task runs on),
 * and the call is recorded as the error `command aborted`. Hosts that cancel with an `AbortSignal`
 * turn it into interruption at their edge (the Cordis and MCP adapters answer `command aborted`).
 *
 * @since 0.1.0
 */
export interface ToolCallContext {
  readonly callId: string
  readonly session?: ToolSession
  /**
   * Receives a foreground `bash` call's output while it runs: new complete lines cleaned like model
   * text, at most one update per 100 ms (Clock) and a last one at the end. The result is unchanged;
   * it comes once the last update has been delivered, or 1 s (Clock) after the run has ended when the
   * callback blocks.
   *
   * @since 0.1.0
   */
  readonly onProgress?: ProgressCallback
}

/**
 * A tool call that produced no value: bad input, a refused escalation, an infrastructure fault, an
 * abort. `message` is the exact contract text; hosts render it as `Error: <message>`.
 *
 * @since 0.1.0
 */
export class ToolError extends Schema.TaggedError<ToolError>()("ToolError", {
  message: Schema.String
}) {}

/**
 * A UI card for a call or its result; pure, so replays present the same card.
 *
 * @since 0.1.0
 */
export type ToolPresentation =
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
 * One published tool.
 *
 * @since 0.1.0
 */
export interface ToolDescriptor {
  readonly name: string
  readonly description: string
  readonly parameters: JsonSchemaObject
  /** The model-facing text of a successful value (exactly per CONTRACT). */
  readonly render: (value: unknown) => string
  readonly presentCall: (args: unknown) => ToolPresentation
  /** From the stored structured value, never from parsing text. */
  readonly presentResult: (args: unknown, value: unknown) => ToolPresentation
}

/**
 * A prompt section a host adds to its system prompt.
 *
 * @since 0.1.0
 */
export interface PromptSection {
  readonly name: string
  readonly order: number
  readonly text: string
}

/**
 * The outcome of {@link AgentTools.call}: what the model sees, and the canonical value.
 *
 * @since 0.1.0
 */
export type ToolCallResult =
  | { readonly isError: false; readonly value: unknown; readonly text: string }
  | { readonly isError: true; readonly message: string; readonly text: string }

/**
 * The composed tools, ready for a host.
 *
 * @since 0.1.0
 */
export class AgentTools extends Context.Tag("effect-bash/AgentTools")<
  AgentTools,
  {
    /** `bash`, then the task tools when a task runtime is composed. */
    readonly tools: ReadonlyArray<ToolDescriptor>
    readonly promptSections: ReadonlyArray<PromptSection>
    /** Validates `args` (unknown keys ignored) and runs the tool; the value is the canonical result. */
    readonly execute: (name: string, args: unknown, call: ToolCallContext) => Effect.Effect<unknown, ToolError>
    /** `execute` + `render`, never failing: errors become `{ isError: true, text: "Error: <message>" }`. */
    readonly call: (name: string, args: unknown, call: ToolCallContext) => Effect.Effect<ToolCallResult>
    /**
     * Takes the completion notices (`background task <id> (...) finished [status: ...]. Read its
     * output with task_output.`) of a session's finished tasks, each once; `undefined` takes those of
     * session-less tasks. A notice is dropped once a tool result has shown that task's final status.
     * Hosts deliver them as messages of their own after a result or between turns.
     */
    readonly takeNotices: (session: string | undefined) => Effect.Effect<ReadonlyArray<string>>
  }
>() {}
