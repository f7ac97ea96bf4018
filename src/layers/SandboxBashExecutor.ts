/**
 * The sandboxing executor: the local executor's process mechanics, with each command
 * started through bubblewrap — read-only or workspace-write file confinement, its own PID namespace
 * (nothing it starts outlives the call), credential stores hidden, the network optionally cut. It
 * fails closed: a confined mode never runs unconfined.
 *
 * @since 0.1.0
 */
import { executorLayers } from "./internal/executor/executorLayers.js"
import { sandboxConfinement } from "./internal/sandbox/confinement.js"
import { environment, resolveSandboxConfig } from "./sandboxSettings.js"

export { defaults, environment, Settings } from "./sandboxSettings.js"

const executor = executorLayers({
  resolve: resolveSandboxConfig,
  confine: sandboxConfinement,
  environment,
  empty: {}
})

/**
 * The sandboxing executor over the ports in context: checks `settings` (failing with the first bad
 * field), fills the defaults, probes bubblewrap and starts the executor in the current scope.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = executor.make

/**
 * The sandboxing executor over given ports (a fake `ProcessSpawner` in tests).
 *
 * @since 0.1.0
 * @category layers
 */
export const layerWith = executor.layerWith

/**
 * The sandboxing executor on Node: needs nothing else but bubblewrap. A setting its `Settings` Schema
 * rejects fails the layer, naming the field, before any process starts.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = executor.layer

/**
 * The sandboxing executor with its settings read through `Config`, so a user picks the variables:
 * `layerConfig({ sandboxMode: Config.literal("read-only", "workspace-write")("MODE") })`. Without an
 * argument it reads the `EFFECT_BASH_*` variables ({@link environment}).
 *
 * @since 0.1.0
 * @category layers
 */
export const layerConfig = executor.layerConfig
