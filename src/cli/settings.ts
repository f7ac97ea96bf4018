/**
 * The executor's settings as the CLI takes them: a flag wins over its `EFFECT_BASH_*` environment
 * variable, which wins over the executor's default. Every value is checked here, and an error names
 * the flag or variable it came from (`--grace-ms: expected a positive finite number, got "soon"`).
 */
import * as Options from "@effect/cli/Options"
import * as FileSystem from "@effect/platform/FileSystem"
import { ConfigError, Data, Effect, Option, Schema } from "effect"
import * as path from "node:path"
import { ContainerSettings } from "../layers/containerSettings.js"
import * as LocalBashExecutor from "../layers/LocalBashExecutor.js"
import * as SandboxBashExecutor from "../layers/SandboxBashExecutor.js"
import type { Setting, SettingKind } from "../layers/settingsSchema.js"
import {
  decodeSettings,
  elementExpectationOf,
  envName,
  environmentOf,
  expectationOf,
  kindOf,
  PositiveFinite,
  setting,
  settingOf
} from "../layers/settingsSchema.js"
import { echoValue } from "../services/internal/requestChecks.js"

/**
 * A flag or environment variable holds a value the CLI cannot use; `field` is its name.
 */
export class SettingsError extends Data.TaggedError("SettingsError")<{
  readonly field: string
  readonly message: string
}> {}

/**
 * The settings every subcommand runs with.
 */
export interface CliSettings {
  /** Absolute working directory: the executor's default and the MCP session's `cwd`. */
  readonly workdir: string
  /** What the flags and the environment set; the executor fills in the rest. */
  readonly executor: LocalBashExecutor.Settings.Input
  /** Present when a sandbox mode is set: commands run under the sandboxing executor. */
  readonly sandbox?: SandboxOwn
  /** Present when a container image is set: commands run in containers (never with a sandbox mode). */
  readonly container?: ContainerOwn
  /**
   * Present with a sandbox mode: how the CLI asks a human to approve a sandbox escalation (through
   * the MCP client, or on the terminal).
   */
  readonly approval?: typeof ApprovalSettings.Type
}

/**
 * The CLI's own approval settings: how long a human may take to answer an escalation request
 * before it counts as cancelled. They apply only with a sandbox mode.
 */
export const ApprovalSettings = Schema.Struct({
  timeoutMs: Schema.optionalWith(
    PositiveFinite.annotations(setting({
      env: "APPROVAL_TIMEOUT_MS",
      flag: {
        name: "approval-timeout-ms",
        pseudo: "N",
        description: (name) =>
          `How long a sandbox escalation waits for the user's answer before it is cancelled (env ${name})`
      }
    })),
    { default: () => 120_000 }
  )
})

type ApprovalKey = keyof typeof ApprovalSettings.fields

const approvalSettings = Object.entries(ApprovalSettings.fields).flatMap(([key, field]) =>
  Option.match(settingOf(field), {
    onNone: () => [],
    onSome: (setting) => [{ key: key as ApprovalKey, kind: kindOf(field), setting, flag: setting.flag! }]
  })
)
const approvalOption = (key: ApprovalKey): string => `approval.${key}`

type ContainerOwn = typeof ContainerSettings.Encoded
type ContainerKey = keyof typeof ContainerSettings.fields

/** The container executor's own settings; their flags are keyed `container.<setting>`. */
const containerSettings = Object.entries(ContainerSettings.fields).flatMap(([key, field]) =>
  Option.match(settingOf(field), {
    onNone: () => [],
    onSome: (setting) => [{ key: key as ContainerKey, kind: kindOf(field), setting }]
  })
)
const containerFlagged = containerSettings.flatMap(({ key, kind, setting }) =>
  setting.flag ? [{ key, kind, setting, flag: setting.flag }] : []
)
const containerByKey = new Map(containerSettings.map((entry) => [entry.key, entry]))
const containerOption = (key: ContainerKey): string => `container.${key}`

type Key = keyof typeof SandboxBashExecutor.Settings.fields

/** Every setting the CLI reads (the sandboxing executor's, which include the local executor's). */
const settings: ReadonlyArray<{ readonly key: Key; readonly kind: SettingKind; readonly setting: Setting }> = Object
  .entries(SandboxBashExecutor.Settings.fields)
  .flatMap(([key, field]) =>
    Option.match(settingOf(field), { onNone: () => [], onSome: (setting) => [{ key: key as Key, kind: kindOf(field), setting }] })
  )

const flagged = settings.flatMap(({ key, kind, setting }) => setting.flag ? [{ key, kind, setting, flag: setting.flag }] : [])

const byKey = new Map(settings.map((entry) => [entry.key, entry]))

/** `--workspace-root`: the flag of a setting, for messages. */
const flagOf = (key: Key): string => `--${byKey.get(key)?.setting.flag?.name ?? key}`

const isLocal = (key: Key): key is keyof typeof LocalBashExecutor.Settings.fields => key in LocalBashExecutor.Settings.fields

/** The sandbox's own settings (mode, workspace root, network, …); they apply only with a sandbox mode. */
type SandboxOwn = Omit<SandboxBashExecutor.Settings.Input, keyof LocalBashExecutor.Settings.Input>

const allFlagged = [...flagged, ...containerFlagged, ...approvalSettings]

/**
 * The settings flags by whether they take a value (`--grace-ms 500`) or not (`--keep-spill-files`,
 * `--contain`).
 */
export const settingsFlagNames = {
  valued: allFlagged.filter(({ kind }) => kind._tag !== "boolean").map(({ flag }) => flag.name),
  boolean: allFlagged.filter(({ kind }) => kind._tag === "boolean").map(({ flag }) => flag.name)
} as const

/** A flag's raw value: text (numbers stay text until checked), a switch, a repeated value or a choice. */
type FlagValue = Option.Option<string> | boolean | ReadonlyArray<string>

const optionOf = (kind: SettingKind, flag: NonNullable<Setting["flag"]>, env: string): Options.Options<FlagValue> => {
  const described = <A>(options: Options.Options<A>) =>
    Options.withDescription(flag.pseudo === undefined ? options : Options.withPseudoName(options, flag.pseudo), flag.description(env))
  switch (kind._tag) {
    case "boolean":
      return described(Options.boolean(flag.name))
    case "list":
      // Optional, so the usage line shows it in brackets like the other flags.
      return Options.repeated(described(Options.text(flag.name))).pipe(
        Options.optional,
        Options.map(Option.getOrElse((): ReadonlyArray<string> => []))
      )
    case "choice":
      // Text, checked with the other values, so a wrong choice is reported by flag name like them.
      return Options.optional(
        Options.withDescription(
          Options.withPseudoName(Options.text(flag.name), flag.pseudo ?? kind.choices.join("|")),
          flag.description(env)
        )
      )
    case "number":
    case "string":
      return Options.optional(described(Options.text(flag.name)))
  }
}

/**
 * The settings flags, shared by `run` and `mcp`, derived from the executors' settings Schemas (one
 * per annotated field, keyed by the setting's name). Values stay raw text here; {@link resolveSettings}
 * checks them, so flag and environment errors read alike.
 */
export const settingsOptions: Options.Options<SettingsFlags> = Options.all(
  Object.fromEntries([
    ...flagged.map(({ key, kind, setting, flag }) => [key, optionOf(kind, flag, envName(setting))] as const),
    ...containerFlagged.map(({ key, kind, setting, flag }) =>
      [containerOption(key), optionOf(kind, flag, envName(setting))] as const
    ),
    ...approvalSettings.map(({ key, kind, setting, flag }) =>
      [approvalOption(key), optionOf(kind, flag, envName(setting))] as const
    )
  ])
)

/**
 * The raw values of {@link settingsOptions}, by setting name.
 */
export type SettingsFlags = { readonly [key: string]: FlagValue }

const invalid = (field: string, message: string) => new SettingsError({ field, message: `${field}: ${message}` })

/** `field` was given without a sandbox mode, which it needs. */
export const requiresSandbox = (field: string) => invalid(field, `applies only with ${flagOf("sandboxMode")}`)

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

/** A given value and where it came from (`--grace-ms`, `EFFECT_BASH_GRACE_MS`), for the error. */
interface Given {
  readonly value: unknown
  /** As the user wrote it, when it was parsed from text. */
  readonly raw: unknown
  readonly source: string
}

const fromFlag = (kind: SettingKind, value: FlagValue): Option.Option<{ readonly value: unknown; readonly raw: unknown }> => {
  if (typeof value === "boolean") return value ? Option.some({ value, raw: value }) : Option.none()
  if (Option.isOption(value)) {
    return Option.map(value, (text) => {
      const number = text.trim() === "" ? Number.NaN : Number(text)
      return { value: kind._tag === "number" && !Number.isNaN(number) ? number : text, raw: text }
    })
  }
  return value.length > 0 ? Option.some({ value, raw: value }) : Option.none()
}

/** The value of each setting given by a flag or a variable; a flag wins over its variable. */
const gather = (flags: SettingsFlags) =>
  Effect.gen(function*() {
    const given = new Map<Key, Given>()
    const env: Readonly<Record<string, unknown>> = yield* Effect.mapError(SandboxBashExecutor.environment, describeConfigError)
    for (const [key, value] of Object.entries(env)) {
      const entry = byKey.get(key as Key)
      if (entry !== undefined) given.set(entry.key, { value, raw: value, source: envName(entry.setting) })
    }
    for (const { key, kind, flag } of flagged) {
      const value = flags[key]
      if (value === undefined) continue
      Option.map(fromFlag(kind, value), (parsed) => given.set(key, { ...parsed, source: `--${flag.name}` }))
    }
    return given
  })

/** The container settings given by a flag or a variable; a flag wins over its variable. */
const gatherContainer = (flags: SettingsFlags) =>
  Effect.gen(function*() {
    const given = new Map<ContainerKey, Given>()
    const env: Readonly<Record<string, unknown>> = yield* Effect.mapError(
      environmentOf(ContainerSettings),
      describeConfigError
    )
    for (const [key, value] of Object.entries(env)) {
      const entry = containerByKey.get(key as ContainerKey)
      if (entry !== undefined && value !== undefined) {
        given.set(entry.key, { value, raw: value, source: envName(entry.setting) })
      }
    }
    for (const { key, kind, flag } of containerFlagged) {
      const value = flags[containerOption(key)]
      if (value === undefined) continue
      Option.map(fromFlag(kind, value), (parsed) => given.set(key, { ...parsed, source: `--${flag.name}` }))
    }
    return given
  })

/** The container settings, checked, when any was given; an image is then required. */
const checkContainer = (given: ReadonlyMap<ContainerKey, Given>) =>
  Effect.gen(function*() {
    if (given.size === 0) return undefined
    const image = containerByKey.get("image")!.setting
    if (!given.has("image")) {
      const [, first] = [...given][0]!
      return yield* invalid(first.source, `applies only with --${image.flag?.name} (or ${envName(image)})`)
    }
    const input = Object.fromEntries([...given].map(([key, { value }]) => [key, value]))
    const problem = yield* Effect.flip(decodeSettings(ContainerSettings, input)).pipe(Effect.option)
    if (Option.isNone(problem)) return input as ContainerOwn
    const key = problem.value.field as ContainerKey
    const entry = given.get(key)
    const expectation = Option.getOrElse(expectationOf(ContainerSettings.fields[key]), () => "a valid value")
    return yield* invalid(entry?.source ?? key, `expected ${expectation}, got ${echoValue(entry?.raw)}`)
  })

/** The approval settings, checked; a given one needs a sandbox mode, and without one there are none. */
const checkApproval = (flags: SettingsFlags, sandboxed: boolean) =>
  Effect.gen(function*() {
    const given = new Map<ApprovalKey, Given>()
    const env: Readonly<Record<string, unknown>> = yield* Effect.mapError(environmentOf(ApprovalSettings), describeConfigError)
    for (const { key, kind, setting, flag } of approvalSettings) {
      const flagValue = flags[approvalOption(key)]
      const fromFlagValue = flagValue === undefined ? Option.none() : fromFlag(kind, flagValue)
      if (Option.isSome(fromFlagValue)) given.set(key, { ...fromFlagValue.value, source: `--${flag.name}` })
      else if (env[key] !== undefined) given.set(key, { value: env[key], raw: env[key], source: envName(setting) })
    }
    const [first] = given.values()
    if (first !== undefined && !sandboxed) return yield* requiresSandbox(first.source)
    if (!sandboxed) return undefined
    const input = Object.fromEntries([...given].map(([key, { value }]) => [key, value]))
    return yield* decodeSettings(ApprovalSettings, input).pipe(
      Effect.catchAll((problem) => {
        const key = problem.field as ApprovalKey
        const entry = given.get(key)
        const expectation = Option.getOrElse(expectationOf(ApprovalSettings.fields[key]), () => "a valid value")
        return invalid(entry?.source ?? key, `expected ${expectation}, got ${echoValue(entry?.raw)}`)
      })
    )
  })

/** The first problem, in the CLI's words: `--grace-ms: expected a positive finite number, got "soon"`. */
const check = (given: ReadonlyMap<Key, Given>) =>
  Effect.gen(function*() {
    const input = Object.fromEntries([...given].map(([key, { value }]) => [key, value]))
    const problem = yield* Effect.flip(decodeSettings(SandboxBashExecutor.Settings, input)).pipe(Effect.option)
    if (Option.isNone(problem)) return
    const { field: key, path: below } = problem.value
    const entry = given.get(key as Key)
    const field = SandboxBashExecutor.Settings.fields[key as Key]
    const source = entry?.source ?? key
    const [index] = below
    if (typeof index === "number" && Array.isArray(entry?.value)) {
      const expectation = Option.getOrElse(elementExpectationOf(field), () => "valid")
      return yield* invalid(source, `${echoValue(entry.value[index])} is not ${expectation}`)
    }
    const kind = kindOf(field)
    const expectation = Option.getOrElse(
      expectationOf(field),
      () => kind._tag === "choice" ? `one of ${kind.choices.join(", ")}` : "a valid value"
    )
    return yield* invalid(source, `expected ${expectation}, got ${echoValue(entry?.raw)}`)
  })

/** The given values of the settings `keep` selects; they passed {@link check}. */
const valuesOf = (given: ReadonlyMap<Key, Given>, keep: (key: Key) => boolean) =>
  Object.fromEntries([...given].flatMap(([key, { value }]) => keep(key) ? [[key, value]] : []))

/**
 * Merges the flags over the `EFFECT_BASH_*` environment (read through the current `ConfigProvider`),
 * checks every value and resolves the working directory to an existing absolute directory.
 */
export const resolveSettings = Effect.fn("Cli.resolveSettings")(function*(flags: SettingsFlags) {
  const given = yield* gather(flags)
  yield* check(given)
  const executor: LocalBashExecutor.Settings.Input = valuesOf(given, isLocal)
  const sandbox: SandboxOwn = valuesOf(given, (key) => !isLocal(key))
  if (sandbox.sandboxMode === undefined) {
    for (const key of ["workspaceRoot", "network", "allowUnixSockets"] as const) {
      if (sandbox[key] !== undefined) return yield* requiresSandbox(flagOf(key))
    }
  }
  const container = yield* checkContainer(yield* gatherContainer(flags))
  const approval = yield* checkApproval(flags, sandbox.sandboxMode !== undefined)
  if (container !== undefined && sandbox.sandboxMode !== undefined) {
    return yield* invalid(flagOf("sandboxMode"), "not together with --container-image: choose the sandbox or containers")
  }
  const cwd = given.get("cwd")
  const source = cwd?.source ?? "working directory"
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
  const contained = container === undefined ? {} : {
    container: {
      ...container,
      ...(container.workspaceRoot === undefined ? {} : { workspaceRoot: path.resolve(container.workspaceRoot) })
    }
  }
  return { workdir, executor: { ...executor, cwd: workdir }, ...confined, ...contained, ...(approval === undefined ? {} : { approval }) } satisfies CliSettings
})
