/**
 * Compositions for the tool tests: AgentToolsLive over a double executor, the live env registry and
 * task runtime, and optional approval / persistence, with every service the tests inspect exposed.
 */
import { Effect, Layer } from "effect"
import type { Approval } from "../src/services/Approval.js"
import * as ApprovalScripted from "../src/testing/ApprovalScripted.js"
import type { BashEnvRegistry } from "../src/services/BashEnvRegistry.js"
import * as BashEnvRegistryLive from "../src/layers/BashEnvRegistryLive.js"
import * as SessionJsonlEnvContributor from "../src/layers/SessionJsonlEnvContributor.js"
import * as TasksLive from "../src/layers/TasksLive.js"
import type { SessionPersistence } from "../src/services/SessionPersistence.js"
import type { BashExecutor } from "../src/services/BashExecutor.js"
import type { Tasks } from "../src/services/Tasks.js"
import { AgentTools } from "../src/services/AgentTools.js"
import * as AgentToolsLive from "../src/tool/AgentToolsLive.js"
import type { CompletionNotices } from "../src/services/CompletionNotices.js"

/** The harness home every composition uses, so `DSH_HOME` is predictable. */
export const dshHome = "/tmp/effect-bash-test-home"

export interface Composition<X> {
  readonly executor: Layer.Layer<BashExecutor | X>
  readonly tasks?: boolean
  readonly approval?: ReadonlyArray<Approval.Outcome>
  /** Another approval channel (instead of `approval`). */
  readonly approvalLayer?: Layer.Layer<Approval>
  readonly enableRunInBackground?: boolean
  readonly persistence?: Layer.Layer<SessionPersistence>
  /** Register the `session-persistence` env contributor (needs `persistence`). */
  readonly jsonlEnv?: boolean
  /** A replacement task runtime (e.g. one that never attaches a surface). */
  readonly tasksLayer?: Layer.Layer<Tasks>
}

/**
 * AgentTools plus the executor's controls, the registry, and (when asked) Tasks, ApprovalScripted and
 * SessionPersistence. The type lists every service a test may ask for; one that was not composed is
 * missing at run time.
 */
export const compose = <X>(
  composition: Composition<X>
): Layer.Layer<
  AgentTools | CompletionNotices | BashExecutor | X | BashEnvRegistry | Tasks | ApprovalScripted.ApprovalScripted | SessionPersistence
> => {
  const base = Layer.mergeAll(
    composition.executor,
    BashEnvRegistryLive.layer({ dshHome }),
    composition.tasks === false ? Layer.empty : composition.tasksLayer ?? TasksLive.layer(),
    composition.approval === undefined ? Layer.empty : ApprovalScripted.layer(composition.approval),
    composition.approvalLayer ?? Layer.empty,
    composition.persistence ?? Layer.empty
  )
  const services = composition.jsonlEnv === true ? Layer.provideMerge(SessionJsonlEnvContributor.layer, base) : base
  const config = composition.enableRunInBackground === undefined
    ? {}
    : { enableRunInBackground: composition.enableRunInBackground }
  return AgentToolsLive.layer(config).pipe(Layer.provideMerge(services), Layer.orDie) as Layer.Layer<
    AgentTools | CompletionNotices | BashExecutor | X | BashEnvRegistry | Tasks | ApprovalScripted.ApprovalScripted | SessionPersistence
  >
}

let calls = 0

/** A fresh call context. */
export const callContext = (extra: Partial<AgentTools.CallContext> = {}): AgentTools.CallContext => ({
  callId: `call-${++calls}`,
  ...extra
})

/** `AgentTools.callUnknown` with a fresh call id. */
export const callTool = (name: string, args: unknown, extra: Partial<AgentTools.CallContext> = {}) =>
  Effect.flatMap(AgentTools, (tools) => tools.callUnknown(name, args, callContext(extra)))

/** The text the model sees for one call. */
export const textOf = (name: string, args: unknown, extra: Partial<AgentTools.CallContext> = {}) =>
  Effect.map(callTool(name, args, extra), (result) => result.text)
