/**
 * Who is calling: the facts about one tool call that services key on (sessions, owners, env).
 *
 * @since 0.1.0
 */

/**
 * The agent session a call belongs to.
 *
 * @since 0.1.0
 * @category models
 */
export interface ToolSession {
  readonly id: string
  /** The session's working directory, as the host spells it. */
  readonly cwd?: string
}

/**
 * One tool call, as seen by services.
 *
 * @since 0.1.0
 * @category models
 */
export interface ToolExecution {
  readonly callId: string
  readonly toolName: string
  /** Absent for calls made outside any agent session. */
  readonly session?: ToolSession
}
