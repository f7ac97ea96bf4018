/**
 * The seam between the generic plugin and a harness adapter. The generic plugin provides `ctx.bash`,
 * `ctx.bashEnv` and `ctx.tasks` on any Cordis 4 host; an adapter fits them to one harness: it backs
 * Approval and SessionPersistence with the harness's own services and puts the tools, the prompt
 * sections and the completion notices where that harness's agents see them. The generic plugin
 * imports no adapter (an architecture test holds it to that); the package entry composes the two.
 */
import type { BashStackOverrides } from "../BashStack.js"
import type { AgentTools } from "../services/AgentTools.js"
import type { BashExecutor } from "../services/BashExecutor.js"
import type { CompletionNotices } from "../services/CompletionNotices.js"
import type { SandboxSessions } from "../services/SandboxSessions.js"
import type { ToolSession } from "../services/ToolExecution.js"
import type { CallRunner } from "./CallRunner.js"
import type { PluginConfig } from "./config.js"
import type { CordisContext, CordisDisposable } from "./host.js"

/**
 * The running plugin, as an adapter attaches to it; `C` is the whole config, the adapter's own
 * fields included.
 */
export interface RunningPlugin<C extends PluginConfig> {
  /** The plugin's name (what its messages name as their source). */
  readonly name: string
  readonly config: C
  readonly runner: CallRunner<never>
  readonly executor: BashExecutor["Type"]
  readonly notices: CompletionNotices["Type"]
  readonly sessions: SandboxSessions["Type"]
  readonly tools: AgentTools["Type"]
}

/**
 * One plugin load's harness side; state its two halves share (the agents of the calls in flight)
 * lives in it and goes with the load.
 */
export interface HarnessInstance<C extends PluginConfig> {
  /** The stack's Approval and SessionPersistence, backed by the host's services (read at call time). */
  readonly services: Pick<BashStackOverrides, "approval" | "persistence">
  /**
   * The session a `ctx.terminals` caller's owner stands for (the harness's agent, say); without it
   * an owner is a session id string.
   */
  readonly terminalOwner?: (owner: unknown) => ToolSession | undefined
  /**
   * Starts the harness side once `ctx.bash` & co. are provided (unless `registerTools` is false);
   * returns its disposers in the order the plugin yields them (Cordis runs them in reverse).
   */
  readonly attach: (plugin: RunningPlugin<C>) => ReadonlyArray<CordisDisposable>
}

/**
 * A harness adapter: one instance per plugin load. Its own config fields join the generic plugin's
 * in one published schema (`configWith`), typed here as `C`.
 */
export type HarnessAdapter<C extends PluginConfig> = (ctx: CordisContext) => HarnessInstance<C>
