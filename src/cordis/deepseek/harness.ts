/**
 * The parts of the DeepSeek harness (`@deepseek-ai/dsh-*`) the harness adapter touches, typed
 * structurally as in `../host.ts`: its agents and their messages, its tool registry and prompt
 * service, and its approval and session-persistence services.
 */
import type { CordisDisposable } from "../host.js"

/**
 * A content block of a harness tool result.
 */
export interface HarnessTextBlock {
  readonly type: "text"
  readonly text: string
}

/**
 * A frozen user-role message of the harness (`UserMessage` of `@deepseek-ai/dsh-llm`), as a
 * plugin's `notice` carries it.
 */
export interface HarnessNoticeMessage {
  readonly id: string
  readonly role: "user"
  readonly content: ReadonlyArray<HarnessTextBlock>
  readonly source: {
    readonly kind: "plugin"
    readonly plugin: string
    readonly form: "notice"
    /** One line of at most 120 characters (`CONTEXT_SUMMARY_MAX_CHARS`). */
    readonly summary: string
  }
}

/**
 * The agent a harness tool call runs for (`Agent` of `@deepseek-ai/dsh-agent`): its session header,
 * and — in harnesses that have them — its status and the lanes for unprompted messages.
 */
export interface HarnessAgent {
  readonly session?: {
    readonly header?: { readonly id?: unknown; readonly cwd?: unknown }
  }
  /** `'idle' | 'running'`. */
  readonly status?: unknown
  /** Queues model-facing context for the next step without waking the driver. */
  readonly inject?: (message: HarnessNoticeMessage) => void
  /** Queues a follow-up turn and wakes the driver. */
  readonly followup?: (message: HarnessNoticeMessage) => void
}

/**
 * What a harness tool body receives besides its arguments.
 */
export interface HarnessRunContext {
  readonly callId: string
  readonly signal: AbortSignal
  readonly agent?: HarnessAgent
}

/**
 * The completed outcome a harness hands `presentResult`.
 */
export interface HarnessToolResult {
  readonly content: ReadonlyArray<unknown>
  readonly isError: boolean
  readonly meta?: unknown
}

/**
 * A UI card of the harness (`card`-tagged render intent).
 */
export type HarnessView =
  | { readonly card: "terminal"; readonly [field: string]: unknown }
  | { readonly card: "generic"; readonly [field: string]: unknown }

/**
 * A raw harness tool definition (`ToolDefinition` of `@deepseek-ai/dsh-tools`): a JSON Schema for
 * the parameters — which the registry does not validate, so the body does — and a mandatory output
 * declaration whose schema the returned value is validated against.
 */
export interface HarnessToolDefinition {
  readonly name: string
  readonly description: string
  readonly parameters: Readonly<Record<string, unknown>>
  readonly output: {
    readonly schema: Readonly<Record<string, unknown>>
    render(args: unknown, value: unknown): Array<HarnessTextBlock>
    presentationMeta?(args: unknown, value: unknown): unknown
  }
  execute(args: unknown, exec: HarnessRunContext): Promise<unknown>
  presentCall?(args: unknown): HarnessView | undefined
  presentResult?(args: unknown, result: HarnessToolResult): HarnessView | undefined
}

/**
 * The harness tool registry (`ctx.tools`).
 */
export interface HarnessToolRuntime {
  /** Registers for the lifetime of the calling fiber; returns the exact disposer. */
  register(definition: HarnessToolDefinition): CordisDisposable
}

/**
 * What a harness prompt assembly is for (`AssembleContext`; `agent` when it is an agent's request).
 */
export interface HarnessAssembleContext {
  readonly agent?: HarnessAgent
}

/**
 * The harness prompt registry (`ctx.systemPrompt`).
 */
export interface HarnessSystemPrompt {
  /**
   * Contributes a section for the lifetime of the calling fiber; returns the exact disposer. A text
   * provider is evaluated at each assembly.
   */
  section(section: {
    readonly name: string
    readonly order: number
    readonly text: string | ((context: HarnessAssembleContext | undefined) => string)
  }): CordisDisposable
  /** Contributes a dynamic context, its text evaluated per assembly (for the assembling agent, when any). */
  context?(context: {
    readonly name: string
    readonly order: number
    readonly text: (assembly: { readonly agent?: HarnessAgent }) => string
  }): CordisDisposable
}

/**
 * A host approval service (`ctx.approval`, `@deepseek-ai/dsh-user-approval`'s shape).
 */
export interface HostApproval {
  request(request: {
    readonly agent: HarnessAgent
    readonly toolName: string
    readonly callId?: string
    readonly reason?: string
    /** Aborting withdraws the question. */
    readonly signal?: AbortSignal
  }): Promise<unknown>
}

/**
 * A host session-persistence service (`ctx.sessionPersistence`): only `locate` is used.
 */
export interface HostSessionPersistence {
  locate(session: unknown): unknown
}
