/**
 * effect-bash: a model-facing `bash` tool and its local executor as Effect services.
 *
 * Services are `Context.Tag`s with their types in a namespace of the same name (`BashExecutor.Spec`);
 * implementations are modules with `layer` (ready to use, on Node), `layerConfig` (settings read
 * through `Config`) and, for the executors, `layerWith` (the service over ports the caller provides,
 * e.g. a fake `ProcessSpawner`).
 *
 * @since 0.1.0
 */

// Services: the seams, their errors and the values that belong to them.
export { AgentTools, ToolError } from "./services/AgentTools.js"
export { Approval } from "./services/Approval.js"
export { BashEnvCollectError, BashEnvRegistrationError, BashEnvRegistry } from "./services/BashEnvRegistry.js"
export {
  AbortedBeforeSpawnError,
  BackgroundLimitError,
  BashExecutor,
  BashRequestError,
  liveOutputBufferBytes,
  SandboxMode,
  SandboxUnavailableError
} from "./services/BashExecutor.js"
export { CompletionNotices } from "./services/CompletionNotices.js"
export { ProcessSpawner, SpawnError } from "./services/ProcessSpawner.js"
export { PtySpawner, PtySpawnError } from "./services/PtySpawner.js"
export { SandboxSessions } from "./services/SandboxSessions.js"
export { SessionPersistence, SessionPersistenceError } from "./services/SessionPersistence.js"
export { InvalidWaitTimeoutError, isTerminalStatus, TaskAccessError, Tasks, TasksUnavailableError } from "./services/Tasks.js"
export { TerminalError, Terminals } from "./services/Terminals.js"
export type { ToolExecution, ToolSession } from "./services/ToolExecution.js"

// Layers
export * as ApprovalCallback from "./layers/ApprovalCallback.js"
export * as BashEnvRegistryLive from "./layers/BashEnvRegistryLive.js"
export * as BashStack from "./BashStack.js"
export type { BashStackConfig, BashStackOverrides, BashStackServices } from "./BashStack.js"
export * as LocalBashExecutor from "./layers/LocalBashExecutor.js"
export { LocalBashExecutorConfigError } from "./layers/executorSettings.js"
export * as NodeProcessSpawner from "./layers/NodeProcessSpawner.js"
export * as NodePtySpawner from "./layers/NodePtySpawner.js"
export * as SandboxBashExecutor from "./layers/SandboxBashExecutor.js"
export * as SandboxSessionsLive from "./layers/SandboxSessionsLive.js"
export * as SessionJsonlEnvContributor from "./layers/SessionJsonlEnvContributor.js"
export * as SessionPersistenceJsonl from "./layers/SessionPersistenceJsonl.js"
export * as TasksLive from "./layers/TasksLive.js"
export * as TerminalsLive from "./layers/TerminalsLive.js"

// Tools
export * as AgentToolsLive from "./tool/AgentToolsLive.js"
export * as BashTool from "./tool/BashTool.js"
export * as TaskKillTool from "./tool/TaskKillTool.js"
export * as TaskListTool from "./tool/TaskListTool.js"
export * as TaskOutputTool from "./tool/TaskOutputTool.js"
export * as TerminalTools from "./tool/TerminalTools.js"
