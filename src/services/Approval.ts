/**
 * Asking a human: the consent step before a sandbox escalation runs.
 */
import type * as Effect from "effect/Effect"
import * as Context from "effect/Context"
import type { BashExecutor } from "./BashExecutor.js"
import type { ToolSession } from "./ToolExecution.js"

/**
 * The approval channel.
 *
 * @since 0.1.0
 * @category tags
 */
export class Approval extends Context.Tag("effect-bash/Approval")<
  Approval,
  {
    readonly request: (request: Approval.Request) => Effect.Effect<Approval.Outcome>
    /**
     * Asks whether a call may reach names beyond the executor's network allow-list, for that call
     * or for the session. A channel without it cannot grant that: such requests are `unavailable`.
     *
     * @since 0.2.0
     */
    readonly requestNetwork?: (request: Approval.NetworkRequest) => Effect.Effect<Approval.NetworkOutcome>
  }
>() {}

/**
 * The types of the {@link Approval} service.
 *
 * @since 0.1.0
 * @category models
 */
export declare namespace Approval {
  /**
   * The answer to one approval request.
   *
   * @since 0.1.0
   * @category models
   */
  export type Outcome = "allowed-once" | "rejected" | "cancelled" | "unavailable"

  /**
   * The answer to a network request: besides {@link Outcome}'s, `allowed-for-session` keeps the
   * names for the session's later calls too.
   *
   * @since 0.2.0
   * @category models
   */
  export type NetworkOutcome = Outcome | "allowed-for-session"

  /**
   * A call asks to reach names beyond the executor's allow-list (its deny-list still wins).
   *
   * @since 0.2.0
   * @category models
   */
  export interface NetworkRequest {
    readonly session?: ToolSession
    readonly toolName: string
    readonly callId: string
    /** The model's justification, shown to the user. */
    readonly reason: string
    /** The exact command that would run. */
    readonly command: string
    /** The entries asked for: `example.com`, `*.example.com`, an IP literal, each with an optional `:port`. */
    readonly names: ReadonlyArray<string>
    /** The directory the command would run in, resolved. */
    readonly workdir?: string
    /** Whether the command would run as a background task. */
    readonly background?: boolean
    /** The foreground run's time limit in milliseconds; absent for a background task. */
    readonly timeoutMs?: number
  }

  /**
   * One approval request.
   *
   * @since 0.1.0
   * @category models
   */
  export interface Request {
    readonly session?: ToolSession
    readonly toolName: string
    readonly callId: string
    /** The model's justification, shown to the user. */
    readonly reason: string
    /** The exact command that would run. */
    readonly command: string
    /** The mode the call asks for. */
    readonly mode: BashExecutor.SandboxMode
    /**
     * The directory the command would run in, resolved (the executor's default filled in). The `bash`
     * tool always sets it; a request from elsewhere may not.
     *
     * @since 0.2.0
     */
    readonly workdir?: string
    /**
     * Whether the command would run as a background task (no time limit) rather than in the foreground.
     *
     * @since 0.2.0
     */
    readonly background?: boolean
    /**
     * The foreground run's time limit in milliseconds, resolved (the executor's default and cap
     * applied); absent for a background task.
     *
     * @since 0.2.0
     */
    readonly timeoutMs?: number
  }
}
