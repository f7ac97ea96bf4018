/**
 * effect-bash: a model-facing `bash` tool and its local executor as Effect services.
 *
 * @since 0.1.0
 */
export * from "./services/BashExecutor.js"
export * from "./services/ProcessSpawner.js"
export * from "./services/ToolExecution.js"
export { LocalBashExecutor, LocalBashExecutorConfigError } from "./layers/LocalBashExecutor.js"
export type { LocalBashExecutorConfig } from "./layers/LocalBashExecutor.js"
export { NodeProcessSpawner } from "./layers/NodeProcessSpawner.js"
export { FakeProcessSpawner, FakeSpawnerControl } from "./layers/FakeProcessSpawner.js"
export type { FakeProcess, FakeScript, FakeTermBehaviour, SentSignal } from "./layers/FakeProcessSpawner.js"
