/**
 * Compositions for the tool tests: AgentToolsLive over a double executor, the live env registry and
 * task runtime, and the services a test adds (approval, persistence), each exposed to the test.
 */
import { Effect, Layer } from "effect"
import type { BashEnvRegistry } from "../../src/services/BashEnvRegistry.js"
import * as BashEnvRegistryLive from "../../src/layers/BashEnvRegistryLive.js"
import * as TasksLive from "../../src/layers/TasksLive.js"
import type { BashExecutor } from "../../src/services/BashExecutor.js"
import type { Tasks } from "../../src/services/Tasks.js"
import { AgentTools } from "../../src/services/AgentTools.js"
import * as ApprovalScripted from "../../src/testing/ApprovalScripted.js"
import { abortOnSignal } from "../../src/tool/abortable.js"
import * as AgentToolsLive from "../../src/tool/AgentToolsLive.js"
import type { CompletionNotices } from "../../src/services/CompletionNotices.js"

/** The harness home every composition uses, so `DSH_HOME` is predictable. */
export const dshHome = "/tmp/effect-bash-test-home"

export interface Composition<X, S> {
  readonly executor: Layer.Layer<BashExecutor | X>
  /**
   * The services composed beside the executor and the env registry (a task runtime, an approval
   * channel, persistence, an env contributor); they may use the registry.
   */
  readonly services: Layer.Layer<S, unknown, BashEnvRegistry>
  readonly enableRunInBackground?: boolean
}

/**
 * AgentTools over exactly `executor` and `services`, with the live env registry. The type lists only
 * what was composed: asking for a service that is not there is a type error, not a run-time one.
 */
export const composeWith = <X, S>(
  composition: Composition<X, S>
): Layer.Layer<AgentTools | CompletionNotices | BashEnvRegistry | BashExecutor | X | S> => {
  const services = Layer.merge(
    composition.executor,
    Layer.provideMerge(composition.services, BashEnvRegistryLive.layer({ dshHome }))
  )
  const config = composition.enableRunInBackground === undefined
    ? {}
    : { enableRunInBackground: composition.enableRunInBackground }
  return AgentToolsLive.layer(config).pipe(Layer.provideMerge(services), Layer.orDie)
}

/** `services` beside the live task runtime. */
export const withTasks = <S>(
  services: Layer.Layer<S, unknown, BashEnvRegistry>
): Layer.Layer<Tasks | S, unknown, BashEnvRegistry> => Layer.merge(TasksLive.layer(), services)

/** The usual composition: {@link composeWith} with the live task runtime as the only service. */
export const compose = <X>(
  composition: Omit<Composition<X, never>, "services">
): Layer.Layer<AgentTools | CompletionNotices | BashEnvRegistry | BashExecutor | Tasks | X> =>
  composeWith({ ...composition, services: TasksLive.layer() })

/**
 * {@link compose} with an approval channel beside the task runtime (one that answers `unavailable`):
 * over a confining executor the tools then offer escalation.
 */
export const composeWithApproval = <X>(composition: Omit<Composition<X, never>, "services">) =>
  composeWith({ ...composition, services: withTasks(ApprovalScripted.layer([])) })

let calls = 0

/** A fresh call context. */
export const callContext = (extra: Partial<AgentTools.CallContext> = {}): AgentTools.CallContext => ({
  callId: `call-${++calls}`,
  ...extra
})

/** A call's context, and the `AbortSignal` a host would abort it with (turned into interruption, as the Cordis and MCP edges do). */
export type CallExtra = Partial<AgentTools.CallContext> & { readonly signal?: AbortSignal }

/** `AgentTools.callUnknown` with a fresh call id. */
export const callTool = (name: string, args: unknown, { signal, ...extra }: CallExtra = {}) =>
  Effect.flatMap(AgentTools, (tools) => abortOnSignal(tools.callUnknown(name, args, callContext(extra)), signal))

/** The text the model sees for one call. */
export const textOf = (name: string, args: unknown, extra: CallExtra = {}) =>
  Effect.map(callTool(name, args, extra), (result) => result.text)
