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
export * as ApprovalCallback from "./layers/ApprovalCallback.js"
export * as BashEnvRegistryLive from "./layers/BashEnvRegistryLive.js"
export * as BashStack from "./BashStack.js"
export type { BashStackConfig, BashStackOverrides, BashStackServices } from "./BashStack.js"
export * as HostReaperLive from "./layers/HostReaper.js"
export * as LocalBashExecutor from "./layers/LocalBashExecutor.js"
export { LocalBashExecutorConfigError } from "./layers/executorSettings.js"
export { refuseIfAborted, resolveSpec } from "./layers/resolveSpec.js"
export type { ResolveDefaults } from "./layers/resolveSpec.js"
export * as NodeProcessSpawner from "./layers/NodeProcessSpawner.js"
export * as SandboxBashExecutor from "./layers/SandboxBashExecutor.js"
export * as SandboxSessionsLive from "./layers/SandboxSessionsLive.js"
export * as SessionJsonlEnvContributor from "./layers/SessionJsonlEnvContributor.js"
export * as SessionPersistenceJsonl from "./layers/SessionPersistenceJsonl.js"
export * as TasksLive from "./layers/TasksLive.js"

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
