/**
 * The local executor's settings, described once: the Schema below holds every default
 * and every bound; the type, the defaults, the layer's errors, the `EFFECT_BASH_*` `Config`, the CLI
 * flags and the Cordis config are derived from it.
 */
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { decodeSettings, environmentOf, flaggedSetting, PositiveFinite, PositiveInt, setting } from "./settingsSchema.js"

const number = (env: string, flag: string, description: string) =>
  PositiveFinite.annotations(flaggedSetting(env, flag, "N", description))

const count = (env: string, flag: string, description: string) =>
  PositiveInt.annotations(flaggedSetting(env, flag, "N", description))

const isPattern = (pattern: string): boolean => {
  try {
    new RegExp(pattern, "i")
    return true
  } catch {
    return false
  }
}

/** A regular-expression source, compiled case-insensitively. */
const Pattern = Schema.String.pipe(
  Schema.filter(isPattern, {
    description: "a valid regular expression",
    message: (issue) => `pattern ${JSON.stringify(issue.actual)} is not a valid regular expression`
  })
)

/** A portable environment-variable name. */
const VariableName = Schema.String.pipe(
  Schema.filter((name) => /^[A-Za-z_][A-Za-z0-9_]*$/.test(name), {
    description: "an environment variable name",
    message: (issue) => `name ${JSON.stringify(issue.actual)} is not an environment variable name`
  })
)

const isEffect = (u: unknown): u is Effect.Effect<void> => Effect.isEffect(u)

/**
 * The local executor's settings: each field optional on input, filled with its default on decoding.
 *
 * @since 0.1.0
 * @category schemas
 */
export const Settings = Schema.Struct({
  /** Default working directory; `process.cwd()` at resolve time when absent. */
  cwd: Schema.optional(Schema.String.annotations(setting({
    env: "CWD",
    flag: {
      name: "workdir",
      pseudo: "DIR",
      description: (name) => `Working directory of commands (env ${name}; default: the current directory)`
    }
  }))),
  /** Default foreground timeout. */
  timeoutMs: Schema.optionalWith(number("TIMEOUT_MS", "timeout-ms", "Default foreground timeout in ms"), {
    default: () => 120_000
  }),
  /** Cap on per-call timeouts. */
  maxTimeoutMs: Schema.optionalWith(number("MAX_TIMEOUT_MS", "max-timeout-ms", "Cap on any per-call timeout in ms"), {
    default: () => 600_000
  }),
  /** In-memory budget per stream (stdout's can be lowered per call). */
  maxOutputBytes: Schema.optionalWith(
    number("MAX_OUTPUT_BYTES", "max-output-bytes", "Bytes of each stream kept in memory (the tail)"),
    { default: () => 64_000 }
  ),
  /** Largest spill file; a stream beyond it keeps only its tail. */
  maxSpillBytes: Schema.optionalWith(
    number("MAX_SPILL_BYTES", "max-spill-bytes", "Largest spill file holding a truncated stream's full output"),
    { default: () => 64 * 1024 * 1024 }
  ),
  /**
   * Bound on the total size of the layer's spill files: the oldest finished files are removed first;
   * a file still being written never is.
   */
  maxSpillTotalBytes: Schema.optionalWith(
    number("MAX_SPILL_TOTAL_BYTES", "max-spill-total-bytes", "Bound on all spill files together; the oldest finished go first"),
    { default: () => 1024 * 1024 * 1024 }
  ),
  /** Time between SIGTERM and SIGKILL, and the bound on draining pipes after exit. */
  graceMs: Schema.optionalWith(number("GRACE_MS", "grace-ms", "Time between SIGTERM and SIGKILL in ms"), {
    default: () => 3_000
  }),
  /** Keep the spill directory when the layer closes. */
  keepSpillFiles: Schema.optionalWith(
    Schema.Boolean.annotations(setting({
      env: "KEEP_SPILL_FILES",
      flag: { name: "keep-spill-files", description: (name) => `Keep spill files after exit (env ${name})` }
    })),
    { default: () => false }
  ),
  /**
   * Spawn every command with `node:child_process` (a fork of the host) instead of `posix_spawn`: for a
   * host that runs a handful of commands, where loading the FFI binding does not pay.
   */
  directSpawn: Schema.optionalWith(
    Schema.Boolean.annotations(setting({
      env: "DIRECT_SPAWN",
      flag: {
        name: "direct-spawn",
        description: (name) => `Spawn commands with node:child_process, not posix_spawn (env ${name})`
      }
    })),
    { default: () => false }
  ),
  /** Parent of the spill directory; the OS temp directory when absent. */
  spillParent: Schema.optional(Schema.String.annotations(setting({
    env: "SPILL_DIR",
    flag: { name: "spill-dir", pseudo: "DIR", description: (name) => `Parent directory of the spill directory (env ${name})` }
  }))),
  /** Inherited names kept even when they look like credentials. */
  envAllow: Schema.optionalWith(
    Schema.Array(VariableName).annotations(setting({
      env: "ENV_ALLOW",
      flag: {
        name: "env-allow",
        pseudo: "NAME",
        description: (name) =>
          `Inherited variable to keep even if it looks like a credential; one name per flag, repeat the flag for more: --env-allow A --env-allow B (env ${name}=A,B)`
      }
    })),
    { default: () => [] }
  ),
  /** Extra case-insensitive patterns of inherited names to drop. */
  envDeny: Schema.optionalWith(
    Schema.Array(Pattern).annotations(setting({
      env: "ENV_DENY",
      flag: {
        name: "env-deny",
        pseudo: "REGEX",
        description: (name) =>
          `Extra pattern of inherited variable names to drop; one pattern per flag, repeat the flag for more: --env-deny A --env-deny B (env ${name}=A,B)`
      }
    })),
    { default: () => [] }
  ),
  /**
   * Completes when the host escalates its shutdown (a second signal, a shutdown deadline): from then
   * on every kill sends SIGKILL right after SIGTERM and no pipe drain is waited for. Never, when absent.
   */
  escalation: Schema.optional(Schema.declare(isEffect, { identifier: "Effect<void>" })),
  /** Cap on concurrently running background processes. */
  maxBackground: Schema.optionalWith(
    count("MAX_BACKGROUND", "max-background", "Cap on concurrently running background commands"),
    { default: () => 16 }
  ),
  /** How many finished background processes stay tracked (`ownerOf`). */
  maxFinishedBackground: Schema.optionalWith(
    count("MAX_FINISHED_BACKGROUND", "max-finished-background", "Finished background commands kept tracked"),
    { default: () => 64 }
  ),
  /**
   * Run every command in its own PID namespace (bubblewrap, no file confinement), so nothing it
   * starts outlives the call. Contained commands cannot see or signal the host's other processes.
   */
  contain: Schema.optionalWith(
    Schema.Boolean.annotations(setting({
      env: "CONTAIN",
      flag: {
        name: "contain",
        description: (name) =>
          `Run each command in its own PID namespace (bubblewrap) so nothing it starts outlives it (env ${name})`
      }
    })),
    { default: () => false }
  ),
  /** The bubblewrap binary, for `contain` and the sandboxing executor; found on `PATH` by default. */
  bwrapPath: Schema.optionalWith(Schema.String.annotations(setting({ env: "BWRAP_PATH" })), { default: () => "bwrap" })
}).annotations({ identifier: "LocalBashExecutor.Settings" })

/**
 * Every setting of the local executor, defaults filled in.
 *
 * @since 0.1.0
 * @category models
 */
export interface Settings extends Schema.Schema.Type<typeof Settings> {}

/**
 * @since 0.1.0
 * @category models
 */
export declare namespace Settings {
  /**
   * What a user gives: any subset of the settings.
   *
   * @since 0.1.0
   * @category models
   */
  export type Input = Schema.Schema.Encoded<typeof Settings>
}

/** The name the executor internals use for the decoded settings. */
export type LocalBashExecutorConfig = Settings

/**
 * A setting is invalid; the layer fails to build.
 *
 * @since 0.1.0
 * @category errors
 */
export class LocalBashExecutorConfigError extends Data.TaggedError("LocalBashExecutorConfigError")<{
  readonly field: string
  readonly message: string
}> {}

/**
 * Decodes `input` with `schema`, filling defaults, or fails with the first problem as
 * `<prefix>: <field> <message>` (`bash-local: graceMs must be a positive finite number`).
 */
export const decodeWith = <A, I>(schema: Schema.Schema<A, I>, prefixOf: (field: string) => string) =>
(input: I): Effect.Effect<A, LocalBashExecutorConfigError> =>
  Effect.mapError(
    decodeSettings(schema, input),
    ({ field, message }) => new LocalBashExecutorConfigError({ field, message: `${prefixOf(field)}: ${field} ${message}` })
  )

/**
 * Fills defaults and checks every setting.
 */
export const resolveConfig: (input: Settings.Input) => Effect.Effect<Settings, LocalBashExecutorConfigError> =
  decodeWith(Settings, () => "bash-local")

/**
 * The defaults, decoded from nothing.
 *
 * @since 0.1.0
 * @category constants
 */
export const defaults: Settings = Schema.decodeSync(Settings)({})

/**
 * The settings from `EFFECT_BASH_<SETTING>` variables (`EFFECT_BASH_TIMEOUT_MS`,
 * `EFFECT_BASH_ENV_ALLOW=A,B`, …); unset variables keep the defaults. Values are checked by the layer.
 *
 * @since 0.1.0
 * @category constants
 */
export const environment = environmentOf(Settings)
