/**
 * effect-bash: a model-facing `bash` tool and its local executor as Effect services.
 *
 * @since 0.1.0
 */
// Service seams
export * from "./services/Approval.js"
export * from "./services/BashEnvRegistry.js"
export * from "./services/BashExecutor.js"
export * from "./services/ProcessSpawner.js"
export * from "./services/SessionPersistence.js"
export * from "./services/Tasks.js"
export * from "./services/ToolExecution.js"

// Layers
export { ApprovalCallback } from "./layers/ApprovalCallback.js"
export type { ApprovalAsk, ApprovalCallbackOptions } from "./layers/ApprovalCallback.js"
export { ApprovalNone } from "./layers/ApprovalNone.js"
export { BashEnvRegistryLive } from "./layers/BashEnvRegistryLive.js"
export { BashStack } from "./layers/BashStack.js"
export type { BashStackConfig, BashStackOverrides, BashStackServices } from "./layers/BashStack.js"
export { LocalBashExecutor, LocalBashExecutorConfigError } from "./layers/LocalBashExecutor.js"
export type { LocalBashExecutorConfig } from "./layers/LocalBashExecutor.js"
export { NodeProcessSpawner } from "./layers/NodeProcessSpawner.js"
export { SessionJsonlEnvContributor } from "./layers/SessionJsonlEnvContributor.js"
export { SessionPersistenceJsonl } from "./layers/SessionPersistenceJsonl.js"
export { SessionPersistenceNone } from "./layers/SessionPersistenceNone.js"
export { TasksLive } from "./layers/TasksLive.js"
export type { TasksLiveConfig } from "./layers/TasksLive.js"

// Test doubles
export { ApprovalScripted } from "./layers/ApprovalScripted.js"
export { FakeConfiningExecutor } from "./layers/FakeConfiningExecutor.js"
export { FakeProcessSpawner, FakeSpawnerControl } from "./layers/FakeProcessSpawner.js"
export type { FakeProcess, FakeScript, FakeTermBehaviour, SentSignal } from "./layers/FakeProcessSpawner.js"
export { bashRunResult, ScriptedBashExecutor, untilAborted } from "./layers/ScriptedBashExecutor.js"

// Tools
export * from "./tool/AgentTools.js"
export { AgentToolsLive } from "./tool/AgentToolsLive.js"
export type { AgentToolsLiveConfig } from "./tool/AgentToolsLive.js"
export * from "./tool/CompletionNotices.js"
export { BashToolkit, CurrentToolSession } from "./tool/BashToolkit.js"
export type { BashAiTool, BashToolkitWithHandler } from "./tool/BashToolkit.js"
export type { BashToolValue } from "./tool/BashToolValue.js"
export { renderTaskNotice } from "./tool/taskTexts.js"
