/**
 * Per-session sandbox modes: a session's standing override, and the model-facing
 * policy text of the mode a session's next call runs under.
 */
import type * as Effect from "effect/Effect"
import type * as Option from "effect/Option"
import * as Context from "effect/Context"
import type { BashExecutor, BashRequestError } from "./BashExecutor.js"
import type { ToolSession } from "./ToolExecution.js"

/**
 * The model-facing policy text of a mode, `root` being the session's workspace root.
 *
 * @since 0.1.0
 * @category utils
 */
export const sandboxPolicyText = (mode: BashExecutor.SandboxMode, root: string): string => {
  switch (mode) {
    case "read-only":
      return "Current DSH file policy: read-only. Any available operation enforced by the DSH file sandbox cannot modify files in the standing mode. Do not refuse a required modification from this policy alone: try an available tool normally and follow any denial and escalation guidance it returns."
    case "workspace-write":
      return `Current DSH file policy: workspace-write. Any available operation enforced by the DSH file sandbox may modify files under the session workspace: ${JSON.stringify(root)}. Some platform temporary areas may also be writable.`
    case "danger-full-access":
      return "Current DSH file policy: danger-full-access. The DSH file sandbox does not restrict file modifications by available operations."
  }
}

/**
 * The prompt context the policy text is delivered as (the reference's name and order); the hosts
 * this package ships (Cordis, MCP) use it.
 *
 * @internal
 */
export const sandboxPolicyContext = { name: "sandbox:policy", order: 110 } as const

/**
 * Standing sandbox modes per session. Mode order for one call: an approved one-shot escalation, then
 * the session's override, then the executor's default.
 *
 * @since 0.1.0
 * @category tags
 */
export class SandboxSessions extends Context.Tag("effect-bash/SandboxSessions")<
  SandboxSessions,
  {
    /** Sets a session's standing mode (`undefined` clears it); it applies from the session's next call. */
    readonly setMode: (session: string, mode: BashExecutor.SandboxMode | undefined) => Effect.Effect<void>
    /**
     * Sets what a session's confined calls may reach besides the sandbox's allow-list (`undefined` or
     * none clears it), from its next call; the deny-list still comes first. Fails naming a bad entry,
     * or when the executor has no allow-listed network.
     */
    readonly allowNetwork: (
      session: string,
      entries: ReadonlyArray<string> | undefined
    ) => Effect.Effect<void, BashRequestError>
    /** The session's own allow entries (none when unset). */
    readonly networkOf: (session: string | undefined) => Effect.Effect<ReadonlyArray<string>>
    /** The session's override, when one is set. */
    readonly modeOf: (session: string) => Effect.Effect<Option.Option<BashExecutor.SandboxMode>>
    /**
     * The mode a call of `session` runs under without escalation: its override, else the executor's
     * default; `undefined` for an unconfined executor.
     */
    readonly standingMode: (session: string | undefined) => Effect.Effect<BashExecutor.SandboxMode | undefined>
    /**
     * The policy text for the session's prompt context (`sandbox:policy`, order 110); none for an
     * unconfined executor. Synchronous, for hosts whose prompt providers are.
     */
    readonly policyText: (session: ToolSession | undefined) => string | undefined
  }
>() {}
