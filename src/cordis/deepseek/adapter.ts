/**
 * The DeepSeek harness adapter: what the generic plugin needs to serve that harness's agents. While
 * the host has them, it registers `bash`, `task_output`, `task_list`, `task_kill` with the harness
 * tool registry (`ctx.tools`) and the `tool:bash` section (and, under a sandbox, the policy context)
 * with its prompt service (`ctx.systemPrompt`); it delivers completion notices to the owning agent;
 * and it answers Approval through `ctx.approval` and locates sessions through `ctx.sessionPersistence`.
 */
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import type { AgentTools } from "../../services/AgentTools.js"
import { sandboxPolicyContext } from "../../services/SandboxSessions.js"
import { abortedCallResult } from "../../tool/abortable.js"
import type { HarnessAdapter } from "../HarnessAdapter.js"
import type { CordisContext } from "../host.js"
import type { EffectBashConfig } from "./config.js"
import type { HarnessAgent, HarnessSystemPrompt, HarnessToolRuntime, HostApproval, HostSessionPersistence } from "./harness.js"
import { HarnessCalls, sessionOf } from "./HarnessCalls.js"
import { startHarnessNotices } from "./harnessNotices.js"
import { toHarnessTool } from "./harnessTools.js"
import { hostApprovalLayer, hostLookup, hostSessionPersistenceLayer } from "./hostLayers.js"

/**
 * The adapter for the DeepSeek harness (`@deepseek-ai/dsh-*` on `@deepseek-ai/cordis`).
 */
export const deepseekHarness: HarnessAdapter<EffectBashConfig> = (ctx) => {
  const calls = new HarnessCalls()
  // Read on every call that has a session (its persistence is located): through the registry
  // itself, as `ctx.get` reads it, since each `ctx.get` builds an Error (a stack capture) first.
  const reflect = ctx.reflect
  const get = (service: string) => reflect === undefined ? ctx.get(service) : reflect.get(service)
  const approval = hostLookup<HostApproval>(get, "approval", "request")
  const persistence = hostLookup<HostSessionPersistence>(get, "sessionPersistence", "locate")
  return {
    // A terminal belongs to a session: an agent's is its session's.
    terminalOwner: (owner) =>
      typeof owner === "string" ? owner === "" ? undefined : { id: owner } : sessionOf(owner as HarnessAgent | undefined),
    services: {
      approval: hostApprovalLayer(approval, calls),
      persistence: (configured) =>
        Option.match(configured, {
          onNone: () => hostSessionPersistenceLayer(persistence, calls),
          onSome: (stored) => hostSessionPersistenceLayer(persistence, calls).pipe(Layer.provide(stored))
        })
    },
    attach: ({ config, executor, name, notices, runner, sessions, tools }) => {
      const invoke = (toolName: string, args: unknown, call: AgentTools.CallContext, signal: AbortSignal) =>
        runner.runUntil(tools.callUnknown(toolName, args, call), signal, abortedCallResult)
      const harnessNotices = startHarnessNotices(ctx, {
        plugin: name,
        mode: config.completionDelivery ?? "wakeup",
        runner,
        calls,
        notices,
        background: config.enableRunInBackground !== false
      })
      // Child fibers: each (re)registers whenever its host service appears, and is undone with it.
      const effectBashTools = (scoped: CordisContext) => {
        const toolRuntime = scoped.get("tools") as HarnessToolRuntime
        for (const descriptor of tools.tools) toolRuntime.register(toHarnessTool(descriptor, invoke, calls))
      }
      const effectBashPrompt = (scoped: CordisContext) => {
        const prompt = scoped.get("systemPrompt") as HarnessSystemPrompt
        for (const section of tools.promptSections) {
          prompt.section(section.name === "tool:bash" ? { ...section, text: harnessNotices.promptText } : section)
        }
        // The sandbox policy of the assembling agent's session: its standing mode can change between turns.
        if (executor.sandboxMode !== undefined && prompt.context !== undefined) {
          prompt.context({
            ...sandboxPolicyContext,
            text: (assembly) => sessions.policyText(sessionOf(assembly.agent)) ?? ""
          })
        }
      }
      return [
        ctx.inject(["tools"], effectBashTools).dispose,
        ctx.inject(["systemPrompt"], effectBashPrompt).dispose,
        ...harnessNotices.disposers
      ]
    }
  }
}
