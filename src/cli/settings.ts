/**
 * The executor's settings as the CLI takes them: a flag wins over its `EFFECT_BASH_*` environment
 * variable, which wins over the executor's default. Every value is checked here, and an error names
 * the flag or variable it came from (`--grace-ms: expected a positive finite number, got "soon"`).
 *
 * @since 0.1.0
 */
import { Options } from "@effect/cli"
import { FileSystem } from "@effect/platform"
import { ConfigError, Data, Effect, Option } from "effect"
import * as path from "node:path"
import type { LocalBashExecutorConfig } from "../layers/LocalBashExecutor.js"
import { fromEnvironment, numericSettings } from "../layers/executorSettings.js"
import { echoValue } from "../services/requestChecks.js"
import type { SandboxBashExecutorConfig } from "../layers/SandboxBashExecutor.js"
import { fromEnvironment as sandboxFromEnvironment } from "../layers/sandboxSettings.js"
import type { BashExecutor } from "../services/BashExecutor.js"

/**
 * A flag or environment variable holds a value the CLI cannot use; `field` is its name.
 *
 * @since 0.1.0
 */
export class SettingsError extends Data.TaggedError("SettingsError")<{
  readonly field: string
  readonly message: string
}> {}

/**
 * The settings every subcommand runs with.
 *
 * @since 0.1.0
 */
export interface CliSettings {
  /** Absolute working directory: the executor's default and the MCP session's `cwd`. */
  readonly workdir: string
  /** What the flags and the environment set; the executor fills in the rest. */
  readonly executor: Partial<LocalBashExecutorConfig>
  /** Present when a sandbox mode is set: commands run under the sandboxing executor. */
  readonly sandbox?: Pick<Partial<SandboxBashExecutorConfig>, "sandboxMode" | "workspaceRoot" | "network">
}

type NumericField = (typeof numericSettings)[number]

/** Flag and environment-variable names per setting, for flags and for error messages. */
const names = {
  cwd: { flag: "workdir", env: "EFFECT_BASH_CWD" },
  timeoutMs: { flag: "timeout-ms", env: "EFFECT_BASH_TIMEOUT_MS" },
  maxTimeoutMs: { flag: "max-timeout-ms", env: "EFFECT_BASH_MAX_TIMEOUT_MS" },
  maxOutputBytes: { flag: "max-output-bytes", env: "EFFECT_BASH_MAX_OUTPUT_BYTES" },
  maxSpillBytes: { flag: "max-spill-bytes", env: "EFFECT_BASH_MAX_SPILL_BYTES" },
  maxSpillTotalBytes: { flag: "max-spill-total-bytes", env: "EFFECT_BASH_MAX_SPILL_TOTAL_BYTES" },
  graceMs: { flag: "grace-ms", env: "EFFECT_BASH_GRACE_MS" },
  keepSpillFiles: { flag: "keep-spill-files", env: "EFFECT_BASH_KEEP_SPILL_FILES" },
  spillParent: { flag: "spill-dir", env: "EFFECT_BASH_SPILL_DIR" },
  envAllow: { flag: "env-allow", env: "EFFECT_BASH_ENV_ALLOW" },
  envDeny: { flag: "env-deny", env: "EFFECT_BASH_ENV_DENY" },
  maxBackground: { flag: "max-background", env: "EFFECT_BASH_MAX_BACKGROUND" },
  maxFinishedBackground: { flag: "max-finished-background", env: "EFFECT_BASH_MAX_FINISHED_BACKGROUND" },
  contain: { flag: "contain", env: "EFFECT_BASH_CONTAIN" },
  sandboxMode: { flag: "sandbox", env: "EFFECT_BASH_SANDBOX" },
  workspaceRoot: { flag: "workspace-root", env: "EFFECT_BASH_WORKSPACE_ROOT" },
  network: { flag: "network", env: "EFFECT_BASH_NETWORK" }
} as const

const sandboxModes: ReadonlyArray<BashExecutor.SandboxMode> = ["read-only", "workspace-write", "danger-full-access"]

const numericFields: ReadonlyArray<NumericField> = numericSettings

const booleanFlags: ReadonlyArray<string> = [names.keepSpillFiles.flag, names.contain.flag]

/**
 * The settings flags by whether they take a value (`--grace-ms 500`) or not (`--keep-spill-files`,
 * `--contain`).
 *
 * @since 0.1.0
 */
export const settingsFlagNames = {
  valued: Object.values(names).map((name) => name.flag).filter((flag) => !booleanFlags.includes(flag)),
  boolean: booleanFlags
} as const

const numberFlag = (field: NumericField, description: string) =>
  Options.text(names[field].flag).pipe(
    Options.withPseudoName("N"),
    Options.withDescription(`${description} (env ${names[field].env})`),
    Options.optional
  )

/**
 * The settings flags, shared by `run` and `mcp`. Values stay raw text here; {@link resolveSettings}
 * checks them, so flag and environment errors read alike.
 *
 * @since 0.1.0
 */
export const settingsOptions = Options.all({
  workdir: Options.text(names.cwd.flag).pipe(
    Options.withPseudoName("DIR"),
    Options.withDescription(`Working directory of commands (env ${names.cwd.env}; default: the current directory)`),
    Options.optional
  ),
  timeoutMs: numberFlag("timeoutMs", "Default foreground timeout in ms"),
  maxTimeoutMs: numberFlag("maxTimeoutMs", "Cap on any per-call timeout in ms"),
  maxOutputBytes: numberFlag("maxOutputBytes", "Bytes of each stream kept in memory (the tail)"),
  maxSpillBytes: numberFlag("maxSpillBytes", "Largest spill file holding a truncated stream's full output"),
  maxSpillTotalBytes: numberFlag("maxSpillTotalBytes", "Bound on all spill files together; the oldest finished go first"),
  graceMs: numberFlag("graceMs", "Time between SIGTERM and SIGKILL in ms"),
  keepSpillFiles: Options.boolean(names.keepSpillFiles.flag).pipe(
    Options.withDescription(`Keep spill files after exit (env ${names.keepSpillFiles.env})`)
  ),
  spillDir: Options.text(names.spillParent.flag).pipe(
    Options.withPseudoName("DIR"),
    Options.withDescription(`Parent directory of the spill directory (env ${names.spillParent.env})`),
    Options.optional
  ),
  envAllow: Options.text(names.envAllow.flag).pipe(
    Options.withPseudoName("NAME"),
    Options.withDescription(`Inherited variable to keep even if it looks like a credential; repeatable (env ${names.envAllow.env}=A,B)`),
    Options.repeated
  ),
  envDeny: Options.text(names.envDeny.flag).pipe(
    Options.withPseudoName("REGEX"),
    Options.withDescription(`Extra pattern of inherited variable names to drop; repeatable (env ${names.envDeny.env}=A,B)`),
    Options.repeated
  ),
  maxBackground: numberFlag("maxBackground", "Cap on concurrently running background commands"),
  maxFinishedBackground: numberFlag("maxFinishedBackground", "Finished background commands kept tracked"),
  contain: Options.boolean(names.contain.flag).pipe(
    Options.withDescription(
      `Run each command in its own PID namespace (bubblewrap) so nothing it starts outlives it (env ${names.contain.env})`
    )
  ),
  sandbox: Options.choice(names.sandboxMode.flag, sandboxModes).pipe(
    Options.withDescription(`Confine commands with bubblewrap in this mode (env ${names.sandboxMode.env})`),
    Options.optional
  ),
  workspaceRoot: Options.text(names.workspaceRoot.flag).pipe(
    Options.withPseudoName("DIR"),
    Options.withDescription(
      `Writable root under --sandbox workspace-write (env ${names.workspaceRoot.env}; default: the working directory)`
    ),
    Options.optional
  ),
  network: Options.choice(names.network.flag, ["host", "none"] as const).pipe(
    Options.withDescription(`"none" cuts sandboxed commands off the network (env ${names.network.env})`),
    Options.optional
  )
})

/**
 * The raw values of {@link settingsOptions}.
 *
 * @since 0.1.0
 */
export type SettingsFlags = typeof settingsOptions extends Options.Options<infer A> ? A : never

const invalid = (field: string, message: string) => new SettingsError({ field, message: `${field}: ${message}` })

const checkNumber = (field: string, value: unknown): Effect.Effect<number, SettingsError> => {
  const parsed = typeof value === "string" && value.trim() !== "" ? Number(value) : value
  return typeof parsed === "number" && Number.isFinite(parsed) && parsed > 0
    ? Effect.succeed(parsed)
    : Effect.fail(invalid(field, `expected a positive finite number, got ${echoValue(value)}`))
}

const checkPatterns = (field: string, patterns: ReadonlyArray<string>) =>
  Effect.forEach(patterns, (pattern) =>
    Effect.try({
      try: () => (new RegExp(pattern, "i"), pattern),
      catch: () => invalid(field, `${echoValue(pattern)} is not a valid regular expression`)
    }))

const checkNames = (field: string, variables: ReadonlyArray<string>) =>
  Effect.forEach(variables, (name) =>
    /^[A-Za-z_][A-Za-z0-9_]*$/.test(name)
      ? Effect.succeed(name)
      : Effect.fail(invalid(field, `${echoValue(name)} is not an environment variable name`)))

/** `EFFECT_BASH.TIMEOUT_MS` → `EFFECT_BASH_TIMEOUT_MS`: name the variable the user actually set. */
const describeConfigError = (error: ConfigError.ConfigError): SettingsError => {
  const problems = ConfigError.reduceWithContext<undefined, Array<readonly [string, string]>>(error, undefined, {
    andCase: (_, left, right) => [...left, ...right],
    orCase: (_, left, right) => [...left, ...right],
    invalidDataCase: (_, pathSegments, message) => [[pathSegments.join("_"), message]],
    missingDataCase: (_, pathSegments, message) => [[pathSegments.join("_"), message]],
    sourceUnavailableCase: (_, pathSegments, message) => [[pathSegments.join("_"), message]],
    unsupportedCase: (_, pathSegments, message) => [[pathSegments.join("_"), message]]
  })
  const [field, message] = problems[0] ?? ["environment", String(error)]
  return invalid(field, message)
}

const present = <A>(value: A | undefined): value is A => value !== undefined

/** Drops absent entries so a spread never overwrites a set value with `undefined`. */
const defined = <T extends object>(record: T): { [K in keyof T]?: Exclude<T[K], undefined> } =>
  Object.fromEntries(Object.entries(record).filter(([, value]) => present(value))) as {
    [K in keyof T]?: Exclude<T[K], undefined>
  }

const fromFlags = (flags: SettingsFlags) =>
  Effect.gen(function*() {
    const numbers: Partial<Record<NumericField, number>> = {}
    for (const field of numericFields) {
      const raw = flags[field]
      if (Option.isSome(raw)) numbers[field] = yield* checkNumber(`--${names[field].flag}`, raw.value)
    }
    return defined({
      ...numbers,
      keepSpillFiles: flags.keepSpillFiles ? true : undefined,
      spillParent: Option.getOrUndefined(flags.spillDir),
      envAllow: flags.envAllow.length > 0 ? yield* checkNames(`--${names.envAllow.flag}`, flags.envAllow) : undefined,
      envDeny: flags.envDeny.length > 0 ? yield* checkPatterns(`--${names.envDeny.flag}`, flags.envDeny) : undefined,
      cwd: Option.getOrUndefined(flags.workdir),
      contain: flags.contain ? true : undefined
    })
  })

const sandboxFromFlags = (flags: SettingsFlags) =>
  defined({
    sandboxMode: Option.getOrUndefined(flags.sandbox),
    workspaceRoot: Option.getOrUndefined(flags.workspaceRoot),
    network: Option.getOrUndefined(flags.network)
  })

const sandboxFromEnv = Effect.map(
  Effect.mapError(sandboxFromEnvironment, describeConfigError),
  (env) => defined({ sandboxMode: env.sandboxMode, workspaceRoot: env.workspaceRoot, network: env.network })
)

const fromEnv = Effect.gen(function*() {
  const env = yield* Effect.mapError(fromEnvironment, describeConfigError)
  for (const field of numericFields) {
    const value = env[field]
    if (present(value)) yield* checkNumber(names[field].env, value)
  }
  if (env.envAllow) yield* checkNames(names.envAllow.env, env.envAllow)
  if (env.envDeny) yield* checkPatterns(names.envDeny.env, env.envDeny)
  return defined(env)
})

/**
 * Merges the flags over the `EFFECT_BASH_*` environment (read through the current `ConfigProvider`),
 * checks every value and resolves the working directory to an existing absolute directory.
 *
 * @since 0.1.0
 */
export const resolveSettings = Effect.fn("Cli.resolveSettings")(function*(flags: SettingsFlags) {
  const executor: Partial<LocalBashExecutorConfig> = { ...(yield* fromEnv), ...(yield* fromFlags(flags)) }
  const sandbox = { ...(yield* sandboxFromEnv), ...sandboxFromFlags(flags) }
  if (sandbox.sandboxMode === undefined) {
    if (sandbox.workspaceRoot !== undefined) {
      return yield* invalid(`--${names.workspaceRoot.flag}`, `applies only with --${names.sandboxMode.flag}`)
    }
    if (sandbox.network !== undefined) {
      return yield* invalid(`--${names.network.flag}`, `applies only with --${names.sandboxMode.flag}`)
    }
  }
  const source = Option.isSome(flags.workdir) ? `--${names.cwd.flag}` : executor.cwd ? names.cwd.env : "working directory"
  const workdir = path.resolve(executor.cwd ?? process.cwd())
  const fs = yield* FileSystem.FileSystem
  const info = yield* Effect.option(fs.stat(workdir))
  if (Option.isNone(info) || info.value.type !== "Directory") {
    return yield* invalid(source, `${echoValue(workdir)} is not a directory`)
  }
  const confined = sandbox.sandboxMode === undefined ? {} : {
    sandbox: {
      ...sandbox,
      ...(sandbox.workspaceRoot === undefined ? {} : { workspaceRoot: path.resolve(sandbox.workspaceRoot) })
    }
  }
  return { workdir, executor: { ...executor, cwd: workdir }, ...confined } satisfies CliSettings
})
