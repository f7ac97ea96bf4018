/**
 * The local executor (CONTRACT §1): `bash -c` per call in its own process group, Clock-driven
 * timeouts, one TERM→KILL kill path, bounded output with spill files owned by the layer's scope,
 * background processes, and disposal that kills everything and waits for it.
 *
 * @since 0.1.0
 */
import { FileSystem, Path } from "@effect/platform"
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import * as NodePath from "@effect/platform-node/NodePath"
import type { ConfigError } from "effect"
import { Effect, Layer } from "effect"
import { BashExecutor } from "../services/BashExecutor.js"
import { ProcessSpawner } from "../services/ProcessSpawner.js"
import type { LocalBashExecutorConfig } from "./executorSettings.js"
import { fromEnvironment, LocalBashExecutorConfigError, resolveConfig } from "./executorSettings.js"
import { makeExecutorCore } from "./internal/executor/executorCore.js"
import { NodeProcessSpawner } from "./NodeProcessSpawner.js"
import { localConfinement } from "./internal/sandbox/confinement.js"

export type { LocalBashExecutorConfig } from "./executorSettings.js"
export { LocalBashExecutorConfigError } from "./executorSettings.js"

const make = (partial: Partial<LocalBashExecutorConfig>) =>
  Effect.gen(function*() {
    const config = yield* resolveConfig(partial)
    return yield* makeExecutorCore(config, yield* localConfinement(config))
  })

/**
 * Layers of the local executor.
 *
 * @since 0.1.0
 */
export const LocalBashExecutor = {
  /** Over given ports (a fake `ProcessSpawner` in tests). */
  layerWith: (
    config: Partial<LocalBashExecutorConfig> = {}
  ): Layer.Layer<BashExecutor, LocalBashExecutorConfigError, ProcessSpawner | FileSystem.FileSystem | Path.Path> =>
    Layer.scoped(BashExecutor, make(config)),
  /** Needs nothing but Node. */
  layer: (config: Partial<LocalBashExecutorConfig> = {}): Layer.Layer<BashExecutor, LocalBashExecutorConfigError> =>
    LocalBashExecutor.layerWith(config).pipe(
      Layer.provide(Layer.mergeAll(NodeProcessSpawner.layer, NodeFileSystem.layer, NodePath.layer))
    ),
  /** `config` overridden by `EFFECT_BASH_*` environment variables (via Effect `Config`). */
  layerConfig: (
    config: Partial<LocalBashExecutorConfig> = {}
  ): Layer.Layer<BashExecutor, LocalBashExecutorConfigError | ConfigError.ConfigError> =>
    Layer.unwrapEffect(
      Effect.map(fromEnvironment, (fromEnv) => LocalBashExecutor.layer({ ...config, ...fromEnv }))
    )
} as const
