/**
 * Asking a human (CONTRACT §5): the consent step before a sandbox escalation runs.
 *
 * @since 0.1.0
 */
import type { Effect } from "effect"
import { Context } from "effect"
import type { SandboxMode } from "./BashExecutor.js"
import type { ToolSession } from "./ToolExecution.js"

/**
 * The answer to one approval request.
 *
 * @since 0.1.0
 */
export type ApprovalOutcome = "allowed-once" | "rejected" | "cancelled" | "unavailable"

/**
 * One approval request.
 *
 * @since 0.1.0
 */
export interface ApprovalRequest {
  readonly session?: ToolSession
  readonly toolName: string
  readonly callId: string
  /** The model's justification, shown to the user. */
  readonly reason: string
  /** The exact command that would run. */
  readonly command: string
  /** The mode the call asks for. */
  readonly mode: SandboxMode
}

/**
 * The approval channel.
 *
 * @since 0.1.0
 */
export class Approval extends Context.Tag("effect-bash/Approval")<
  Approval,
  {
    readonly request: (request: ApprovalRequest) => Effect.Effect<ApprovalOutcome>
  }
>() {}
