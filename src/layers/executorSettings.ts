/**
 * Settings of the local executor, their defaults and their validation.
 *
 * @since 0.1.0
 */
import { Config, Data, Effect, Option } from "effect"

/**
 * Every setting of the local executor.
 *
 * @since 0.1.0
 */
export interface LocalBashExecutorConfig {
  /** Default working directory; `process.cwd()` at resolve time when absent. */
  readonly cwd: string | undefined
  /** Default foreground timeout. */
  readonly timeoutMs: number
  /** Cap on per-call timeouts. */
  readonly maxTimeoutMs: number
  /** In-memory budget per stream (stdout's can be lowered per call). */
  readonly maxOutputBytes: number
  /** Largest spill file; a stream beyond it keeps only its tail. */
  readonly maxSpillBytes: number
  /**
   * Bound on the total size of the layer's spill files: the oldest finished files are removed first;
   * a file still being written never is.
   */
  readonly maxSpillTotalBytes: number
  /** Time between SIGTERM and SIGKILL, and the bound on draining pipes after exit. */
  readonly graceMs: number
  /** Keep the spill directory when the layer closes. */
  readonly keepSpillFiles: boolean
  /** Parent of the spill directory; the OS temp directory when absent. */
  readonly spillParent: string | undefined
  /** Inherited names kept even when they look like credentials. */
  readonly envAllow: ReadonlyArray<string>
  /** Extra case-insensitive patterns of inherited names to drop. */
  readonly envDeny: ReadonlyArray<string>
  /**
   * Completes when the host escalates its shutdown (a second signal, a shutdown deadline): from then
   * on every kill sends SIGKILL right after SIGTERM and no pipe drain is waited for. Never, when absent.
   */
  readonly escalation: Effect.Effect<void> | undefined
  /** Cap on concurrently running background processes. */
  readonly maxBackground: number
  /** How many finished background processes stay tracked (`ownerOf`). */
  readonly maxFinishedBackground: number
  /**
   * Run every command in its own PID namespace (bubblewrap, no file confinement), so nothing it
   * starts outlives the call. Contained commands cannot see or signal the host's other processes.
   */
  readonly contain: boolean
  /** The bubblewrap binary, for `contain` and the sandboxing executor; found on `PATH` by default. */
  readonly bwrapPath: string
}

/**
 * The defaults (CONTRACT §1).
 *
 * @since 0.1.0
 */
export const defaults: LocalBashExecutorConfig = {
  cwd: undefined,
  timeoutMs: 120_000,
  maxTimeoutMs: 600_000,
  maxOutputBytes: 64_000,
  maxSpillBytes: 67_108_864,
  maxSpillTotalBytes: 1_073_741_824,
  graceMs: 3_000,
  keepSpillFiles: false,
  spillParent: undefined,
  envAllow: [],
  envDeny: [],
  escalation: undefined,
  maxBackground: 16,
  maxFinishedBackground: 64,
  contain: false,
  bwrapPath: "bwrap"
}

/**
 * A setting is invalid; the layer fails to build.
 *
 * @since 0.1.0
 */
export class LocalBashExecutorConfigError extends Data.TaggedError("LocalBashExecutorConfigError")<{
  readonly field: string
  readonly message: string
}> {}

/**
 * The settings that must be positive finite numbers.
 *
 * @since 0.1.0
 */
export const numericSettings = [
  "timeoutMs",
  "maxTimeoutMs",
  "maxOutputBytes",
  "maxSpillBytes",
  "maxSpillTotalBytes",
  "graceMs",
  "maxBackground",
  "maxFinishedBackground"
] as const

/**
 * Fills defaults and checks every number is positive and finite, and every deny pattern compiles.
 *
 * @since 0.1.0
 */
export const resolveConfig = (
  partial: Partial<LocalBashExecutorConfig>
): Effect.Effect<LocalBashExecutorConfig, LocalBashExecutorConfigError> =>
  Effect.suspend(() => {
    const given = Object.fromEntries(Object.entries(partial).filter(([, value]) => value !== undefined))
    const config: LocalBashExecutorConfig = { ...defaults, ...given }
    for (const field of numericSettings) {
      const value: unknown = config[field]
      if (typeof value !== "number" || !Number.isFinite(value) || value <= 0) {
        return Effect.fail(
          new LocalBashExecutorConfigError({ field, message: `bash-local: ${field} must be a positive finite number` })
        )
      }
    }
    for (const pattern of config.envDeny) {
      try {
        new RegExp(pattern, "i")
      } catch {
        return Effect.fail(
          new LocalBashExecutorConfigError({
            field: "envDeny",
            message: `bash-local: envDeny pattern ${JSON.stringify(pattern)} is not a valid regular expression`
          })
        )
      }
    }
    return Effect.succeed(config)
  })

const optionalNumber = (name: string) => Config.option(Config.number(name))
const list = (name: string) => Config.option(Config.array(Config.string(), name))

/**
 * The settings from environment variables `EFFECT_BASH_<SETTING>` (e.g. `EFFECT_BASH_TIMEOUT_MS`,
 * `EFFECT_BASH_ENV_ALLOW=A,B`); unset variables keep the defaults.
 *
 * @since 0.1.0
 */
export const fromEnvironment: Config.Config<Partial<LocalBashExecutorConfig>> = Config.all({
  cwd: Config.option(Config.string("CWD")),
  timeoutMs: optionalNumber("TIMEOUT_MS"),
  maxTimeoutMs: optionalNumber("MAX_TIMEOUT_MS"),
  maxOutputBytes: optionalNumber("MAX_OUTPUT_BYTES"),
  maxSpillBytes: optionalNumber("MAX_SPILL_BYTES"),
  maxSpillTotalBytes: optionalNumber("MAX_SPILL_TOTAL_BYTES"),
  graceMs: optionalNumber("GRACE_MS"),
  keepSpillFiles: Config.option(Config.boolean("KEEP_SPILL_FILES")),
  spillParent: Config.option(Config.string("SPILL_DIR")),
  envAllow: list("ENV_ALLOW"),
  envDeny: list("ENV_DENY"),
  maxBackground: optionalNumber("MAX_BACKGROUND"),
  maxFinishedBackground: optionalNumber("MAX_FINISHED_BACKGROUND"),
  contain: Config.option(Config.boolean("CONTAIN")),
  bwrapPath: Config.option(Config.string("BWRAP_PATH"))
}).pipe(
  Config.map((options) =>
    Object.fromEntries(
      Object.entries(options).flatMap(([key, value]: [string, Option.Option<unknown>]) =>
        Option.isSome(value) ? [[key, value.value]] : []
      )
    ) as Partial<LocalBashExecutorConfig>
  ),
  Config.nested("EFFECT_BASH")
)
