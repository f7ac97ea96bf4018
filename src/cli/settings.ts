/**
 * The executor's settings as the CLI takes them: a flag wins over its `EFFECT_BASH_*` environment
 * variable, which wins over the executor's default. Every value is checked here, and an error names
 * the flag or variable it came from (`--grace-ms: expected a positive finite number, got "soon"`).
 */
import * as Options from "@effect/cli/Options"
import * as FileSystem from "@effect/platform/FileSystem"
import * as ConfigError from "effect/ConfigError"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as path from "node:path"
import { ContainerNetworkSettings, ContainerSettings } from "../layers/containerSettings.js"
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
  parseDecimal,
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
   * Present with a sandbox mode, or containers with an allow-list: how the CLI asks a human to approve
   * a sandbox escalation or further network names (through the MCP client, or on the terminal).
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

/** A given value and where it came from (`--grace-ms`, `EFFECT_BASH_GRACE_MS`), for the error. */
interface Given {
  readonly value: unknown
  /** As the user wrote it, when it was parsed from text. */
  readonly raw: unknown
  readonly source: string
}

/**
 * The settings of one Schema struct as the CLI reads them: each annotated field, its flag keyed
 * `<prefix><setting>` among {@link SettingsFlags}, and its `EFFECT_BASH_*` variable.
 */
const settingsGroup = <Fields extends Schema.Struct.Fields>(
  struct: Schema.Struct<Fields> & Schema.Schema<Schema.Struct.Type<Fields>, Schema.Struct.Encoded<Fields>>,
  prefix: string
) => {
  type Key = keyof Fields & string
  const entries = Object.entries(struct.fields).flatMap(([key, field]) =>
    Option.match(settingOf(field), {
      onNone: () => [],
      onSome: (setting) => [{ key: key as Key, kind: kindOf(field), setting }]
    })
  )
  const flagged = entries.flatMap((entry) => entry.setting.flag ? [{ ...entry, flag: entry.setting.flag }] : [])
  const byKey = new Map(entries.map((entry) => [entry.key, entry]))
  const optionKey = (key: Key): string => `${prefix}${key}`
  return {
    flagged,
    byKey,
    /** The flags' `Options`, keyed as in {@link SettingsFlags}. */
    options: flagged.map(({ key, kind, setting, flag }) => [optionKey(key), optionOf(kind, flag, envName(setting))] as const),
    /** The value of each setting given by a flag or a variable; a flag wins over its variable. */
    gather: (flags: SettingsFlags) =>
      Effect.gen(function*() {
        const given = new Map<Key, Given>()
        const env: Readonly<Record<string, unknown>> = yield* Effect.mapError(environmentOf(struct), describeConfigError)
        for (const [key, value] of Object.entries(env)) {
          const entry = byKey.get(key as Key)
          if (entry !== undefined && value !== undefined) {
            given.set(entry.key, { value, raw: value, source: envName(entry.setting) })
          }
        }
        for (const { key, kind, flag } of flagged) {
          const value = flags[optionKey(key)]
          if (value === undefined) continue
          Option.map(fromFlag(kind, value), (parsed) => given.set(key, { ...parsed, source: `--${flag.name}` }))
        }
        return given
      }),
    /**
     * The given values decoded (defaults filled in), or the first problem in the CLI's words:
     * `--grace-ms: expected a positive finite number, got "soon"`.
     */
    decode: (given: ReadonlyMap<Key, Given>) =>
      decodeSettings(struct, Object.fromEntries([...given].map(([key, { value }]) => [key, value]))).pipe(
        Effect.catchAll(({ field: key, path: below }) => {
          const entry = given.get(key as Key)
          const field = struct.fields[key as Key]!
          const source = entry?.source ?? key
          const [index] = below
          if (typeof index === "number" && Array.isArray(entry?.value)) {
            const expectation = Option.getOrElse(elementExpectationOf(field), () => "valid")
            return invalid(source, `${echoValue(entry.value[index])} is not ${expectation}`)
          }
          const kind = kindOf(field)
          const expectation = Option.getOrElse(
            expectationOf(field),
            () => kind._tag === "choice" ? `one of ${kind.choices.join(", ")}` : "a valid value"
          )
          // A variable's number is echoed as a number (JSON would spell 1e309, read as Infinity, null).
          const raw = entry?.raw
          return invalid(source, `expected ${expectation}, got ${typeof raw === "number" ? String(raw) : echoValue(raw)}`)
        })
      )
  }
}

/** Every setting of the executors (the sandboxing executor's, which include the local executor's). */
const executorGroup = settingsGroup(SandboxBashExecutor.Settings, "")
/** The container executor's own settings. */
const containerGroup = settingsGroup(ContainerSettings, "container.")
const approvalGroup = settingsGroup(ApprovalSettings, "approval.")

type Key = keyof typeof SandboxBashExecutor.Settings.fields

/** `--workspace-root`: the flag of a setting, for messages. */
const flagOf = (key: Key): string => `--${executorGroup.byKey.get(key)?.setting.flag?.name ?? key}`

const isLocal = (key: Key): key is keyof typeof LocalBashExecutor.Settings.fields => key in LocalBashExecutor.Settings.fields

/** The sandbox's own settings (mode, workspace root, network, …); they apply only with a sandbox mode. */
type SandboxOwn = Omit<SandboxBashExecutor.Settings.Input, keyof LocalBashExecutor.Settings.Input>

type ContainerOwn = typeof ContainerSettings.Encoded & Partial<typeof ContainerNetworkSettings.Encoded>

/** The sandbox's allow-list flags and variables, which serve containers too (with `--container-image`). */
const containerNetworkKeys: ReadonlySet<string> = new Set(Object.keys(ContainerNetworkSettings.fields))

const allFlagged = [...executorGroup.flagged, ...containerGroup.flagged, ...approvalGroup.flagged]

/**
 * The settings flags by whether they take a value (`--grace-ms 500`) or not (`--keep-spill-files`,
 * `--contain`).
 */
export const settingsFlagNames = {
  valued: allFlagged.filter(({ kind }) => kind._tag !== "boolean").map(({ flag }) => flag.name),
  boolean: allFlagged.filter(({ kind }) => kind._tag === "boolean").map(({ flag }) => flag.name)
} as const

/**
 * The settings flags, shared by `run` and `mcp`, derived from the executors' settings Schemas (one
 * per annotated field, keyed by the setting's name). Values stay raw text here; {@link resolveSettings}
 * checks them, so flag and environment errors read alike.
 */
export const settingsOptions: Options.Options<SettingsFlags> = Options.all(
  Object.fromEntries([...executorGroup.options, ...containerGroup.options, ...approvalGroup.options])
)

/**
 * The raw values of {@link settingsOptions}, by setting name.
 */
export type SettingsFlags = { readonly [key: string]: FlagValue }

const invalid = (field: string, message: string) => new SettingsError({ field, message: `${field}: ${message}` })

/**
 * `directory` (the working directory when undefined) made absolute. A relative one is resolved against
 * the working directory, and fails with a {@link SettingsError} naming `field` when that is gone.
 */
export const absoluteDirectory = (directory: string | undefined, field: string) =>
  Effect.try({
    try: () => path.resolve(directory ?? "."),
    catch: () =>
      invalid(
        field,
        directory === undefined
          ? "it no longer exists"
          : `${echoValue(directory)} is relative, and the working directory no longer exists`
      )
  })

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

const fromFlag = (kind: SettingKind, value: FlagValue): Option.Option<{ readonly value: unknown; readonly raw: unknown }> => {
  if (typeof value === "boolean") return value ? Option.some({ value, raw: value }) : Option.none()
  if (Option.isOption(value)) {
    return Option.map(value, (text) => {
      const number = kind._tag === "number" ? parseDecimal(text) : undefined
      return { value: number ?? text, raw: text }
    })
  }
  return value.length > 0 ? Option.some({ value, raw: value }) : Option.none()
}

/** The container settings, checked, when any was given; an image is then required. */
const checkContainer = (given: ReadonlyMap<keyof typeof ContainerSettings.fields, Given>) =>
  Effect.gen(function*() {
    if (given.size === 0) return undefined
    const image = containerGroup.byKey.get("image")!.setting
    if (!given.has("image")) {
      const [, first] = [...given][0]!
      return yield* invalid(first.source, `applies only with --${image.flag?.name} (or ${envName(image)})`)
    }
    yield* containerGroup.decode(given)
    return Object.fromEntries([...given].map(([key, { value }]) => [key, value])) as ContainerOwn
  })

/** The approval settings, checked; a given one needs a sandbox mode, and without one there are none. */
const checkApproval = (given: ReadonlyMap<keyof typeof ApprovalSettings.fields, Given>, sandboxed: boolean) =>
  Effect.gen(function*() {
    const [first] = given.values()
    if (first !== undefined && !sandboxed) return yield* requiresSandbox(first.source)
    if (!sandboxed) return undefined
    return yield* approvalGroup.decode(given)
  })

/** The given values of the settings `keep` selects, once they decoded. */
const valuesOf = (given: ReadonlyMap<Key, Given>, keep: (key: Key) => boolean) =>
  Object.fromEntries([...given].flatMap(([key, { value }]) => keep(key) ? [[key, value]] : []))

/**
 * Merges the flags over the `EFFECT_BASH_*` environment (read through the current `ConfigProvider`),
 * checks every value and resolves the working directory to an existing absolute directory.
 */
export const resolveSettings = Effect.fn("Cli.resolveSettings")(function*(flags: SettingsFlags) {
  const given = yield* executorGroup.gather(flags)
  yield* executorGroup.decode(given)
  const executor: LocalBashExecutor.Settings.Input = valuesOf(given, isLocal)
  const sandbox: SandboxOwn = valuesOf(given, (key) => !isLocal(key))
  const container = yield* checkContainer(yield* containerGroup.gather(flags))
  // With a container image and no sandbox mode, the allow-list's settings are the containers'.
  const forContainer = (key: Key) => container !== undefined && sandbox.sandboxMode === undefined && containerNetworkKeys.has(key)
  if (sandbox.sandboxMode === undefined) {
    const [, first] = [...given].find(([key]) => !isLocal(key) && !forContainer(key)) ?? []
    if (first !== undefined) return yield* requiresSandbox(first.source)
  }
  // Containers with an allow-list ask the user for further names as a sandbox asks for a wider mode.
  const approvable = sandbox.sandboxMode !== undefined || [...given.keys()].some(forContainer)
  const approval = yield* checkApproval(yield* approvalGroup.gather(flags), approvable)
  if (container !== undefined && sandbox.sandboxMode !== undefined) {
    return yield* invalid(flagOf("sandboxMode"), "not together with --container-image: choose the sandbox or containers")
  }
  const cwd = given.get("cwd")
  const source = cwd?.source ?? "working directory"
  const workdir = yield* absoluteDirectory(executor.cwd, source)
  const fs = yield* FileSystem.FileSystem
  const info = yield* Effect.option(fs.stat(workdir))
  if (Option.isNone(info) || info.value.type !== "Directory") {
    return yield* invalid(source, `${echoValue(workdir)} is not a directory`)
  }
  const rootSource = given.get("workspaceRoot")?.source ?? "workspace root"
  const rootOf = (root: string | undefined) =>
    root === undefined ? Effect.succeed({}) : Effect.map(absoluteDirectory(root, rootSource), (workspaceRoot) => ({ workspaceRoot }))
  const confined = sandbox.sandboxMode === undefined ? {} : {
    sandbox: { ...sandbox, ...(yield* rootOf(sandbox.workspaceRoot)) }
  }
  const contained = container === undefined ? {} : {
    container: { ...container, ...valuesOf(given, forContainer), ...(yield* rootOf(container.workspaceRoot)) }
  }
  return { workdir, executor: { ...executor, cwd: workdir }, ...confined, ...contained, ...(approval === undefined ? {} : { approval }) } satisfies CliSettings
})
