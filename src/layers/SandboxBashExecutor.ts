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
import type { ConfigError, Scope } from "effect"
import { Config, Effect, Layer } from "effect"
import { BashExecutor } from "../services/BashExecutor.js"
import type { ProcessSpawner } from "../services/ProcessSpawner.js"
import type { LocalBashExecutorConfigError } from "./executorSettings.js"
import { makeExecutorCore } from "./internal/executor/executorCore.js"
import { sandboxConfinement } from "./internal/sandbox/confinement.js"
import * as NodeProcessSpawner from "./NodeProcessSpawner.js"
import type { Settings } from "./sandboxSettings.js"
import { environment, resolveSandboxConfig } from "./sandboxSettings.js"

export { defaults, environment, Settings } from "./sandboxSettings.js"

/**
 * The sandboxing executor over the ports in context: checks `settings` (failing with the first bad
 * field), fills the defaults, probes bubblewrap and starts the executor in the current scope.
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
    const config = yield* resolveSandboxConfig(settings)
    return yield* makeExecutorCore(config, yield* sandboxConfinement(config))
  })

/**
 * The sandboxing executor over given ports (a fake `ProcessSpawner` in tests).
 *
 * @since 0.1.0
 */
export const layerWith = (
  settings: Settings.Input = {}
): Layer.Layer<BashExecutor, LocalBashExecutorConfigError, ProcessSpawner | FileSystem.FileSystem | Path.Path> =>
  Layer.scoped(BashExecutor, make(settings))

/**
 * The sandboxing executor on Node: needs nothing else but bubblewrap.
 *
 * @since 0.1.0
 */
export const layer = (settings: Settings.Input = {}): Layer.Layer<BashExecutor, LocalBashExecutorConfigError> =>
  layerWith(settings).pipe(Layer.provide(Layer.mergeAll(NodeProcessSpawner.layer, NodeFileSystem.layer, NodePath.layer)))

/**
 * The sandboxing executor with its settings read through `Config`, so a user picks the variables:
 * `layerConfig({ sandboxMode: Config.literal("read-only", "workspace-write")("MODE") })`. Without an
 * argument it reads the `EFFECT_BASH_*` variables ({@link environment}).
 *
 * @since 0.1.0
 */
export const layerConfig = (
  config: Config.Config.Wrap<Settings.Input> = environment
): Layer.Layer<BashExecutor, LocalBashExecutorConfigError | ConfigError.ConfigError> =>
  Layer.unwrapEffect(Effect.map(Config.unwrap(config), layer))
