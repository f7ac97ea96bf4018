/**
 * The layer family of an executor built on the core (the local and the sandboxing executor): the
 * same wiring over each one's own settings and confinement.
 *
 * @internal
 */
import type * as FileSystem from "@effect/platform/FileSystem"
import type * as Path from "@effect/platform/Path"
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import * as NodePath from "@effect/platform-node/NodePath"
import type * as ConfigError from "effect/ConfigError"
import type * as Scope from "effect/Scope"
import * as Config from "effect/Config"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { BashExecutor } from "../../../services/BashExecutor.js"
import type { HostReaper } from "../spawner/HostReaper.js"
import type { ProcessSpawner } from "../../../services/ProcessSpawner.js"
import type { LocalBashExecutorConfig, LocalBashExecutorConfigError } from "../../executorSettings.js"
import * as NodeProcessSpawner from "../../NodeProcessSpawner.js"
import type { Confinement } from "./executorCore.js"
import { makeExecutorCore } from "./executorCore.js"
import { registerTerminalPlacement } from "../terminal/placement.js"

/** The ports an executor runs on. */
type Ports = ProcessSpawner | FileSystem.FileSystem | Path.Path

/**
 * `make`, `layerWith`, `layer` and `layerConfig` of an executor whose settings `resolve` checks
 * and completes, and whose commands `confine` wraps; `environment` is the default `Config`.
 */
export const executorLayers = <Input, Resolved extends LocalBashExecutorConfig>(executor: {
  readonly resolve: (settings: Input) => Effect.Effect<Resolved, LocalBashExecutorConfigError>
  readonly confine: (
    config: Resolved
  ) => Effect.Effect<Confinement, LocalBashExecutorConfigError, ProcessSpawner | Scope.Scope>
  readonly environment: Config.Config.Wrap<Input>
  /** The settings of a call without any: every field at its default. */
  readonly empty: Input
}) => {
  const start = (config: Resolved): Effect.Effect<BashExecutor["Type"], LocalBashExecutorConfigError, Ports | Scope.Scope> =>
    Effect.flatMap(executor.confine(config), (confinement) =>
      // A terminal's shell starts as one of this executor's calls does.
      Effect.tap(makeExecutorCore(config, confinement), (service) =>
        Effect.sync(() => registerTerminalPlacement(service, confinement))))
  const make = (
    settings: Input = executor.empty
  ): Effect.Effect<BashExecutor["Type"], LocalBashExecutorConfigError, Ports | Scope.Scope> =>
    Effect.flatMap(executor.resolve(settings), start)
  const layerWith = (
    settings: Input = executor.empty
  ): Layer.Layer<BashExecutor, LocalBashExecutorConfigError, Ports> => Layer.scoped(BashExecutor, make(settings))
  const spawnerFor = (config: Resolved): Layer.Layer<ProcessSpawner | HostReaper> =>
    config.directSpawn ? NodeProcessSpawner.layerDirectSpawn : NodeProcessSpawner.layer
  // The settings are decoded before the spawner's layer is built: a layer whose settings the Schema
  // rejects starts no process (a runner probed for `contain` needs the spawner, so it comes after).
  // One scoped layer over the ports built in its scope (a graph of layers costs a start more), with
  // the app's other layers: executors share a spawner, and with it its helper processes.
  const layer = (settings: Input = executor.empty): Layer.Layer<BashExecutor, LocalBashExecutorConfigError> =>
    Layer.scoped(
      BashExecutor,
      Effect.gen(function*() {
        const config = yield* executor.resolve(settings)
        const ports = yield* Layer.buildWithMemoMap(
          Layer.mergeAll(spawnerFor(config), NodeFileSystem.layer, NodePath.layer),
          yield* Layer.CurrentMemoMap,
          yield* Effect.scope
        )
        return yield* Effect.provide(start(config), ports)
      })
    )
  const layerConfig = (
    config: Config.Config.Wrap<Input> = executor.environment
  ): Layer.Layer<BashExecutor, LocalBashExecutorConfigError | ConfigError.ConfigError> =>
    Layer.unwrapEffect(Effect.map(Config.unwrap(config), layer))
  return { make, layerWith, layer, layerConfig } as const
}
