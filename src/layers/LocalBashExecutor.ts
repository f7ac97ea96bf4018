/**
 * The local executor: `bash -c` per call in its own process group, Clock-driven
 * timeouts, one TERM→KILL kill path, bounded output with spill files owned by the layer's scope,
 * background processes, and disposal that kills everything and waits for it.
 *
 * @since 0.1.0
 */
import { environment, resolveConfig } from "./executorSettings.js"
import { executorLayers } from "./internal/executor/executorLayers.js"
import { localConfinement } from "./internal/sandbox/confinement.js"

export { defaults, environment, LocalBashExecutorConfigError, Settings } from "./executorSettings.js"

const executor = executorLayers({ resolve: resolveConfig, confine: localConfinement, environment, empty: {} })

/**
 * The executor over the ports in context: checks `settings` (failing with the first bad field),
 * fills the defaults and starts the executor in the current scope.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = executor.make

/**
 * The executor over given ports (a fake `ProcessSpawner` in tests).
 *
 * @since 0.1.0
 * @category layers
 */
export const layerWith = executor.layerWith

/**
 * The executor on Node: needs nothing else. A setting its `Settings` Schema rejects fails the layer,
 * naming the field, before any process starts.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = executor.layer

/**
 * The executor on Node with its settings read through `Config`, so a user picks the variables:
 * `layerConfig({ timeoutMs: Config.number("MY_TIMEOUT_MS") })`. Without an argument it reads the
 * `EFFECT_BASH_*` variables ({@link environment}).
 *
 * @since 0.1.0
 * @category layers
 */
export const layerConfig = executor.layerConfig
