/**
 * The local executor (CONTRACT §1): `bash -c` per call in its own process group, Clock-driven
 * timeouts, one TERM→KILL kill path, bounded output with spill files owned by the layer's scope,
 * background processes, and disposal that kills everything and waits for it.
 *
 * @since 0.1.0
 */
import type { FileSystem, Path } from "@effect/platform"
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import * as NodePath from "@effect/platform-node/NodePath"
import type { ConfigError, Scope } from "effect"
import { Config, Effect, Layer } from "effect"
import { BashExecutor } from "../services/BashExecutor.js"
import type { ProcessSpawner } from "../services/ProcessSpawner.js"
import type { Settings } from "./executorSettings.js"
import { environment, LocalBashExecutorConfigError, resolveConfig } from "./executorSettings.js"
import { makeExecutorCore } from "./internal/executor/executorCore.js"
import * as NodeProcessSpawner from "./NodeProcessSpawner.js"
import { localConfinement } from "./internal/sandbox/confinement.js"

export { defaults, environment, LocalBashExecutorConfigError, Settings } from "./executorSettings.js"

/**
 * The executor over the ports in context: checks `settings` (failing with the first bad field),
 * fills the defaults and starts the executor in the current scope.
 *
 * @since 0.1.0
 */
export const make = (
  settings: Settings.Input = {}
): Effect.Effect<
  BashExecutor["Type"],
  LocalBashExecutorConfigError,
  ProcessSpawner | FileSystem.FileSystem | Path.Path | Scope.Scope
> =>
  Effect.gen(function*() {
    const config = yield* resolveConfig(settings)
    return yield* makeExecutorCore(config, yield* localConfinement(config))
  })

/**
 * The executor over given ports (a fake `ProcessSpawner` in tests).
 *
 * @since 0.1.0
 */
export const layerWith = (
  settings: Settings.Input = {}
): Layer.Layer<BashExecutor, LocalBashExecutorConfigError, ProcessSpawner | FileSystem.FileSystem | Path.Path> =>
  Layer.scoped(BashExecutor, make(settings))

/**
 * The executor on Node: needs nothing else.
 *
 * @since 0.1.0
 */
export const layer = (settings: Settings.Input = {}): Layer.Layer<BashExecutor, LocalBashExecutorConfigError> =>
  layerWith(settings).pipe(Layer.provide(Layer.mergeAll(NodeProcessSpawner.layer, NodeFileSystem.layer, NodePath.layer)))

/**
 * The executor on Node with its settings read through `Config`, so a user picks the variables:
 * `layerConfig({ timeoutMs: Config.number("MY_TIMEOUT_MS") })`. Without an argument it reads the
 * `EFFECT_BASH_*` variables ({@link environment}).
 *
 * @since 0.1.0
 */
export const layerConfig = (
  config: Config.Config.Wrap<Settings.Input> = environment
): Layer.Layer<BashExecutor, LocalBashExecutorConfigError | ConfigError.ConfigError> =>
  Layer.unwrapEffect(Effect.map(Config.unwrap(config), layer))
