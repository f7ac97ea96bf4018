/**
 * effect-bash: a model-facing `bash` tool and its local executor as Effect services.
 *
 * @since 0.1.0
 */
// Service seams
export * from "./services/Approval.js"
export * from "./services/BashEnvRegistry.js"
export * from "./services/BashExecutor.js"
export * from "./services/HostReaper.js"
export * from "./services/ProcessSpawner.js"
export * from "./services/SandboxSessions.js"
export * from "./services/SessionPersistence.js"
export * from "./services/Tasks.js"
export * from "./services/ToolExecution.js"

// Layers
export { ApprovalCallback } from "./layers/ApprovalCallback.js"
export type { ApprovalAsk, ApprovalCallbackOptions } from "./layers/ApprovalCallback.js"
export { ApprovalNone } from "./layers/ApprovalNone.js"
export { BashEnvRegistryLive } from "./layers/BashEnvRegistryLive.js"
export { BashStack } from "./BashStack.js"
export type { BashStackConfig, BashStackOverrides, BashStackServices } from "./BashStack.js"
export { HostReaperLive } from "./layers/HostReaper.js"
export { LocalBashExecutor, LocalBashExecutorConfigError } from "./layers/LocalBashExecutor.js"
export type { LocalBashExecutorConfig } from "./layers/LocalBashExecutor.js"
export { refuseIfAborted, resolveSpec } from "./layers/resolveSpec.js"
export type { ResolveDefaults } from "./layers/resolveSpec.js"
export { NodeProcessSpawner } from "./layers/NodeProcessSpawner.js"
export { SandboxBashExecutor } from "./layers/SandboxBashExecutor.js"
export { SandboxSessionsLive } from "./layers/SandboxSessionsLive.js"
export type { SandboxBashExecutorConfig } from "./layers/SandboxBashExecutor.js"
export { SessionJsonlEnvContributor } from "./layers/SessionJsonlEnvContributor.js"
export { SessionPersistenceJsonl } from "./layers/SessionPersistenceJsonl.js"
export { SessionPersistenceNone } from "./layers/SessionPersistenceNone.js"
export { TasksLive } from "./layers/TasksLive.js"
export type { TasksLiveConfig } from "./layers/TasksLive.js"

// Tools
export * from "./services/AgentTools.js"
export * as AgentToolsLive from "./tool/AgentToolsLive.js"
export * as BashTool from "./tool/BashTool.js"
export * as TaskOutputTool from "./tool/TaskOutputTool.js"
export * as TaskListTool from "./tool/TaskListTool.js"
export * as TaskKillTool from "./tool/TaskKillTool.js"
export * from "./services/CompletionNotices.js"
export { progressInterval, progressSkippedText, reportProgress } from "./tool/liveProgress.js"

export { renderTaskNotice } from "./tool/taskTexts.js"
