/**
 * Settings of the sandboxing executor: the local executor's, plus the sandbox's own.
 *
 * @since 0.1.0
 */
import { Config, Effect, Option } from "effect"
import type { BashExecutor } from "../services/BashExecutor.js"
import type { LocalBashExecutorConfig } from "./executorSettings.js"
import { fromEnvironment as localFromEnvironment, LocalBashExecutorConfigError, resolveConfig } from "./executorSettings.js"
import { defaultHidden } from "./internal/sandbox/bwrap.js"

/**
 * Every setting of the sandboxing executor.
 *
 * @since 0.1.0
 */
export interface SandboxBashExecutorConfig extends LocalBashExecutorConfig {
  /** The default mode (`sandboxMode` of the executor). */
  readonly sandboxMode: BashExecutor.SandboxMode
  /** The writable root when a call carries no policy; the default workdir when absent. */
  readonly workspaceRoot: string | undefined
  /** `none` gives every confined command its own empty network namespace. */
  readonly network: "host" | "none"
  /** Paths hidden from confined commands; `~/` is `home`. */
  readonly hide: ReadonlyArray<string>
  /** The home directory `~/` stands for; the host user's when absent. */
  readonly home: string | undefined
  /** Bound on the runner's usability probe. */
  readonly probeTimeoutMs: number
}

/**
 * The sandbox's own defaults (CONTRACT §7).
 *
 * @since 0.1.0
 */
export const sandboxDefaults = {
  sandboxMode: "read-only",
  workspaceRoot: undefined,
  network: "host",
  hide: defaultHidden,
  home: undefined,
  probeTimeoutMs: 5_000
} as const satisfies Partial<SandboxBashExecutorConfig>

const modes: ReadonlyArray<BashExecutor.SandboxMode> = ["read-only", "workspace-write", "danger-full-access"]

const invalid = (field: string, message: string) =>
  Effect.fail(new LocalBashExecutorConfigError({ field, message: `bash-sandbox: ${field} ${message}` }))

/**
 * Fills defaults and checks every setting.
 *
 * @since 0.1.0
 */
export const resolveSandboxConfig = (
  partial: Partial<SandboxBashExecutorConfig>
): Effect.Effect<SandboxBashExecutorConfig, LocalBashExecutorConfigError> =>
  Effect.gen(function*() {
    // Calls without a workdir start in the workspace root when only the root is configured.
    const local = yield* resolveConfig({ ...partial, cwd: partial.cwd ?? partial.workspaceRoot })
    const given = Object.fromEntries(Object.entries(partial).filter(([, value]) => value !== undefined))
    const config: SandboxBashExecutorConfig = { ...sandboxDefaults, ...given, ...local }
    if (!modes.includes(config.sandboxMode)) {
      return yield* invalid("sandboxMode", `must be one of ${modes.join(", ")}, got ${JSON.stringify(config.sandboxMode)}`)
    }
    if (config.network !== "host" && config.network !== "none") {
      return yield* invalid("network", `must be "host" or "none", got ${JSON.stringify(config.network)}`)
    }
    const timeout: unknown = config.probeTimeoutMs
    if (typeof timeout !== "number" || !Number.isFinite(timeout) || timeout <= 0) {
      return yield* invalid("probeTimeoutMs", "must be a positive finite number")
    }
    return config
  })

/**
 * The settings from `EFFECT_BASH_*` environment variables: the local executor's, plus
 * `EFFECT_BASH_SANDBOX` (the mode), `_WORKSPACE_ROOT`, `_NETWORK`, `_HIDE` (comma-separated) and
 * `_PROBE_TIMEOUT_MS`.
 *
 * @since 0.1.0
 */
export const fromEnvironment: Config.Config<Partial<SandboxBashExecutorConfig>> = Config.all([
  localFromEnvironment,
  Config.all({
    sandboxMode: Config.option(Config.literal(...modes)("SANDBOX")),
    workspaceRoot: Config.option(Config.string("WORKSPACE_ROOT")),
    network: Config.option(Config.literal("host", "none")("NETWORK")),
    hide: Config.option(Config.array(Config.string(), "HIDE")),
    probeTimeoutMs: Config.option(Config.number("PROBE_TIMEOUT_MS"))
  }).pipe(
    Config.map((options) =>
      Object.fromEntries(
        Object.entries(options).flatMap(([key, value]: [string, Option.Option<unknown>]) =>
          Option.isSome(value) ? [[key, value.value]] : []
        )
      ) as Partial<SandboxBashExecutorConfig>
    ),
    Config.nested("EFFECT_BASH")
  )
]).pipe(Config.map(([local, sandbox]) => ({ ...local, ...sandbox })))
