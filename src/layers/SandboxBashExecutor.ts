/**
 * The sandboxing executor (CONTRACT §7): the local executor's process mechanics, with each command
 * started through bubblewrap — read-only or workspace-write file confinement, its own PID namespace
 * (nothing it starts outlives the call), credential stores hidden, the network optionally cut. It
 * fails closed: a confined mode never runs unconfined.
 *
 * @since 0.1.0
 */
import type { FileSystem, Path } from "@effect/platform"
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import * as NodePath from "@effect/platform-node/NodePath"
import type { ConfigError } from "effect"
import { Effect, Layer } from "effect"
import { BashExecutor } from "../services/BashExecutor.js"
import type { ProcessSpawner } from "../services/ProcessSpawner.js"
import type { LocalBashExecutorConfigError } from "./executorSettings.js"
import { makeExecutorCore } from "./internal/executor/executorCore.js"
import { NodeProcessSpawner } from "./NodeProcessSpawner.js"
import type { SandboxBashExecutorConfig } from "./sandboxSettings.js"
import { fromEnvironment, resolveSandboxConfig } from "./sandboxSettings.js"
import { sandboxConfinement } from "./internal/sandbox/confinement.js"

export type { SandboxBashExecutorConfig } from "./sandboxSettings.js"

const make = (partial: Partial<SandboxBashExecutorConfig>) =>
  Effect.gen(function*() {
    const config = yield* resolveSandboxConfig(partial)
    return yield* makeExecutorCore(config, yield* sandboxConfinement(config))
  })

/**
 * Layers of the sandboxing executor.
 *
 * @since 0.1.0
 */
export const SandboxBashExecutor = {
  /** Over given ports (a fake `ProcessSpawner` in tests). */
  layerWith: (
    config: Partial<SandboxBashExecutorConfig> = {}
  ): Layer.Layer<BashExecutor, LocalBashExecutorConfigError, ProcessSpawner | FileSystem.FileSystem | Path.Path> =>
    Layer.scoped(BashExecutor, make(config)),
  /** Needs nothing but Node and bubblewrap. */
  layer: (config: Partial<SandboxBashExecutorConfig> = {}): Layer.Layer<BashExecutor, LocalBashExecutorConfigError> =>
    SandboxBashExecutor.layerWith(config).pipe(
      Layer.provide(Layer.mergeAll(NodeProcessSpawner.layer, NodeFileSystem.layer, NodePath.layer))
    ),
  /** `config` overridden by `EFFECT_BASH_*` environment variables (`EFFECT_BASH_SANDBOX=workspace-write`, …). */
  layerConfig: (
    config: Partial<SandboxBashExecutorConfig> = {}
  ): Layer.Layer<BashExecutor, LocalBashExecutorConfigError | ConfigError.ConfigError> =>
    Layer.unwrapEffect(
      Effect.map(fromEnvironment, (fromEnv) => SandboxBashExecutor.layer({ ...config, ...fromEnv }))
    )
} as const
