/**
 * effect-bash/testing: test doubles for the service seams — a fake OS (`FakeProcessSpawner`) to drive the
 * local executor with `TestClock`, a scripted executor, a confining-executor fake and a scripted approval.
 *
 * @since 0.1.0
 */
export { ApprovalScripted } from "./ApprovalScripted.js"
export { FakeConfiningExecutor } from "./FakeConfiningExecutor.js"
export { FakeProcessSpawner, FakeSpawnerControl } from "./FakeProcessSpawner.js"
export type { FakeProcess, FakeScript, FakeTermBehaviour, SentSignal } from "./FakeProcessSpawner.js"
export { bashRunResult, ScriptedBashExecutor, streamingFromRun, untilAborted } from "./ScriptedBashExecutor.js"
