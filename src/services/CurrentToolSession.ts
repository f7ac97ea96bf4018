/**
 * The agent session of the tool calls a request makes, for hosts whose handlers are handed no call
 * context (an `@effect/ai` toolkit).
 */
import * as Context from "effect/Context"
import type { ToolSession } from "./ToolExecution.js"

/**
 * The agent session tool calls belong to; provide it around `generateText` (request-level). Calls
 * made without it run outside any session.
 *
 * @since 0.1.0
 * @category tags
 */
export class CurrentToolSession extends Context.Tag("effect-bash/CurrentToolSession")<CurrentToolSession, ToolSession>() {}
