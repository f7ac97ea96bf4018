/**
 * effect-bash/testing: test doubles for the service seams — a fake OS (`FakeProcessSpawner`) to drive the
 * local executor with `TestClock`, a fake engine (`FakeContainerEngine`) to drive the container executor, a scripted executor, a confining-executor fake and a scripted approval.
 * Each double is a module (`ScriptedBashExecutor.layer(...)`) whose controls are its Tag
 * (`yield* ScriptedBashExecutor.ScriptedBashExecutor`, `yield* FakeProcessSpawner.FakeSpawnerControl`).
 *
 * @since 0.1.0
 */
export * as ApprovalScripted from "./ApprovalScripted.js"
export * as FakeConfiningExecutor from "./FakeConfiningExecutor.js"
export * as FakeContainerEngine from "./FakeContainerEngine.js"
export * as FakeProcessSpawner from "./FakeProcessSpawner.js"
export * as FakePtySpawner from "./FakePtySpawner.js"
export * as ScriptedBashExecutor from "./ScriptedBashExecutor.js"
