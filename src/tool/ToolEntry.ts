/**
 * One tool as {@link AgentToolsLive} holds it: what hosts publish, and how it runs.
 *
 * @since 0.1.0
 */
import type { Effect } from "effect"
import type { ToolCallContext, ToolDescriptor, ToolError } from "../services/AgentTools.js"

/**
 * A published tool and its handler; `run` validates the raw model arguments itself.
 *
 * @since 0.1.0
 */
export interface ToolEntry {
  readonly descriptor: ToolDescriptor
  readonly run: (args: unknown, call: ToolCallContext) => Effect.Effect<unknown, ToolError>
}
