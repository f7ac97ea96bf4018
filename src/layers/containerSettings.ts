/**
 * The container executor's settings, described once: the local executor's Schema plus the
 * container's own fields. A problem in a local field reads `bash-local: …`, in a container field
 * `bash-container: …`.
 */
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import type { LocalBashExecutorConfigError } from "./executorSettings.js"
import { decodeWith, Settings as LocalSettings } from "./executorSettings.js"
import { containerPolicyEither } from "./internal/network/settings.js"
import { NetworkLists } from "./sandboxSettings.js"
import { environmentOf, flaggedSetting, PositiveFinite, PositiveInt, setting } from "./settingsSchema.js"

/** A number the engine takes only from `minimum` on (`why` names that bound). */
const atLeast = (minimum: number, kind: "an integer" | "a number", why: string) => {
  const expectation = `${kind} of at least ${minimum} (${why})`
  return Schema.Number.pipe(
    Schema.filter((n) => (kind === "an integer" ? Number.isSafeInteger(n) : Number.isFinite(n)) && n >= minimum),
    Schema.annotations({ description: expectation, message: () => ({ message: `must be ${expectation}`, override: true }) })
  )
}

/** The Docker Engine's (and Podman's) bounds. */
const MemoryMb = atLeast(6, "an integer", "the engine's smallest memory limit")
const Cpus = atLeast(0.01, "a number", "the engine's smallest CPU share")

/**
 * The container's own settings: the image every box starts from and what a box may use.
 *
 * @since 0.1.0
 * @category models
 */
export const ContainerSettings = Schema.Struct({
  /** The image each session's container starts from; it needs `bash`, `sleep`, `cp` and `chmod`. */
  image: Schema.String.pipe(
    Schema.filter((image) => image.trim() !== "", {
      message: () => "must name an image"
    })
  ).annotations(flaggedSetting("CONTAINER_IMAGE", "container-image", "IMAGE", "Run commands in containers of this image")),
  /**
   * `none` (the default) gives each container only a loopback interface; `bridge` the engine's default
   * network; `{ allow, deny?, denyReasons?, hosts? }` only loopback and a proxy that admits the names on
   * `allow` (see docs/container.md; an engine on this machine only).
   */
  network: Schema.optionalWith(
    Schema.Union(Schema.Literal("none", "bridge"), NetworkLists).annotations({
      ...setting({
        env: "CONTAINER_NETWORK",
        flag: { name: "container-network", description: (name) => `The containers' network: none or bridge (env ${name})` }
      }),
      message: (issue) => ({
        message: `must be "none", "bridge" or { allow: [...] }, got ${JSON.stringify(issue.actual)}`,
        override: true
      })
    }),
    { default: () => "none" as const }
  ),
  /** Memory limit of each container (swap included), in MiB; the engine takes no less than 6. */
  memoryMb: Schema.optional(
    MemoryMb.annotations(flaggedSetting("CONTAINER_MEMORY_MB", "container-memory-mb", "N", "Memory limit of each container in MiB"))
  ),
  /** Bound on the number of processes in each container. */
  pidsLimit: Schema.optional(
    PositiveInt.annotations(flaggedSetting("CONTAINER_PIDS_LIMIT", "container-pids-limit", "N", "Process limit of each container"))
  ),
  /** CPUs each container may use (fractions allowed, from 0.01; at most the engine's CPUs). */
  cpus: Schema.optional(Cpus.annotations(setting({ env: "CONTAINER_CPUS" }))),
  /**
   * The user commands run as (`name`, `uid` or `uid:gid`), without capabilities; the owner of the
   * mounted directory when absent. `root` (or `0`) runs them as root with the engine's default
   * capabilities and set-id bits allowed: a command can then leave files in the mounted directory that
   * run as root on the host.
   */
  user: Schema.optional(
    Schema.String.pipe(Schema.filter((user) => user.trim() !== "", { message: () => "must name a user" })).annotations(
      flaggedSetting("CONTAINER_USER", "container-user", "USER", "Run commands in containers as this user (root: with capabilities)")
    )
  ),
  /** Mount the image's root file system read-only (a fresh `/tmp` stays writable). */
  readOnlyRoot: Schema.optionalWith(Schema.Boolean.annotations(setting({ env: "CONTAINER_READ_ONLY_ROOT" })), {
    default: () => false
  }),
  /** The engine: `unix:///path`, `tcp://host:port`, `ssh://user@host`; `DOCKER_HOST`, else the default socket, when absent. */
  dockerHost: Schema.optional(Schema.String.annotations(setting({ env: "CONTAINER_DOCKER_HOST" }))),
  /**
   * Where a session's files are. `bind` (the default): the host directory `workspaceRoot` (else
   * `cwd`), mounted at the same path; the engine must see this machine's files. `volume`: an engine
   * volume of the session's container's own, at that path, removed with it; nothing of the host is
   * mounted, so any engine serves.
   */
  workspace: Schema.optionalWith(
    Schema.Literal("bind", "volume").annotations({
      ...setting({ env: "CONTAINER_WORKSPACE" }),
      message: (issue) => ({ message: `must be "bind" or "volume", got ${JSON.stringify(issue.actual)}`, override: true })
    }),
    { default: () => "bind" as const }
  ),
  /**
   * A volume of the engine's, by name, that every box of the layer mounts at the workspace's path
   * (`workspace: "volume"` then, as when given): made when missing, and never removed by the layer or
   * a sweep, so the sessions' files outlive their boxes and the layer. Its sessions share it.
   */
  volume: Schema.optional(
    Schema.String.pipe(
      Schema.filter((name) => /^[A-Za-z0-9][A-Za-z0-9_.-]+$/.test(name), {
        message: () => "must be a volume name: a letter or digit, then letters, digits, _ . or - (at least 2 characters)"
      })
    ).annotations(flaggedSetting("CONTAINER_VOLUME", "container-volume", "NAME", "Keep the containers' workspace in this engine volume"))
  ),
  /**
   * The host directory every container mounts, read-write, at the same path (with a `volume`
   * workspace: the path of the volume); `cwd` when absent. It may not be `/`.
   */
  workspaceRoot: Schema.optional(Schema.String.annotations(setting({ env: "CONTAINER_WORKSPACE_ROOT" }))),
  /** Stop a container that ran nothing for this long (it starts again on the next command); never when absent. */
  idleStopMs: Schema.optional(PositiveFinite.annotations(setting({ env: "CONTAINER_IDLE_STOP_MS" }))),
  /**
   * Bound on each request to the engine: one it does not answer within this long fails, naming the
   * engine, and a call whose kill it does not answer ends, its container taken as lost.
   */
  engineTimeoutMs: Schema.optionalWith(PositiveFinite.annotations(setting({ env: "CONTAINER_ENGINE_TIMEOUT_MS" })), {
    default: () => 30_000
  })
})

/**
 * The container's allow-list in the flat form the sandbox's flags and variables use
 * (`EFFECT_BASH_NETWORK_ALLOW`, `--network-allow` with `--container-image`), and the proxies' bounds.
 *
 * @since 0.2.0
 * @category models
 */
export const ContainerNetworkSettings = Schema.Struct({
  /** The allow-list as a flat list: the same as `network: { allow }`, with `network` left at `none`. */
  networkAllow: Schema.optionalWith(Schema.Array(Schema.String).annotations(setting({ env: "NETWORK_ALLOW" })), {
    default: () => []
  }),
  /** With {@link networkAllow}: names refused even when allowed. */
  networkDeny: Schema.optionalWith(Schema.Array(Schema.String).annotations(setting({ env: "NETWORK_DENY" })), {
    default: () => []
  }),
  /** With {@link networkAllow}: `name=address` pins, the same as `network: { hosts }`. */
  networkHosts: Schema.optionalWith(Schema.Array(Schema.String).annotations(setting({ env: "NETWORK_HOSTS" })), {
    default: () => []
  }),
  /** Under an allow-list, the most upstream connections open at once across all boxes. */
  networkMaxConnections: Schema.optionalWith(PositiveInt.annotations(setting({ env: "NETWORK_MAX_CONNECTIONS" })), {
    default: () => 64
  }),
  /** Under an allow-list, the bound on a client's proxy handshake and on each upstream connect. */
  networkHandshakeTimeoutMs: Schema.optionalWith(
    PositiveFinite.annotations(setting({ env: "NETWORK_HANDSHAKE_TIMEOUT_MS" })),
    { default: () => 10_000 }
  )
})

/**
 * The container executor's settings: the local executor's, plus the container's own.
 *
 * @since 0.1.0
 * @category models
 */
export const Settings = Schema.Struct({
  ...LocalSettings.fields,
  ...ContainerSettings.fields,
  ...ContainerNetworkSettings.fields
}).annotations({ identifier: "DockerBashExecutor.Settings" })

/**
 * Every setting of the container executor, defaults filled in.
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
   * What a user gives: the image and any subset of the other settings.
   *
   * @since 0.1.0
   * @category models
   */
  export type Input = Schema.Schema.Encoded<typeof Settings>
}

const decode = decodeWith(Settings, (field) => field in LocalSettings.fields ? "bash-local" : "bash-container")

/** Fills defaults and checks every setting, the allow-list's entries too. */
export const resolveContainerConfig = (input: Settings.Input): Effect.Effect<Settings, LocalBashExecutorConfigError> =>
  Effect.tap(decode(input), (settings) => containerPolicyEither(settings))

/**
 * The settings from `EFFECT_BASH_*` variables: the local executor's, plus `EFFECT_BASH_CONTAINER_IMAGE`,
 * `_CONTAINER_NETWORK`, `_CONTAINER_MEMORY_MB`, `_CONTAINER_PIDS_LIMIT`, `_CONTAINER_CPUS`,
 * `_CONTAINER_USER`, `_CONTAINER_READ_ONLY_ROOT`, `_CONTAINER_DOCKER_HOST`,
 * `_CONTAINER_WORKSPACE`, `_CONTAINER_VOLUME`, `_CONTAINER_WORKSPACE_ROOT`, `_CONTAINER_IDLE_STOP_MS`,
 * `_CONTAINER_ENGINE_TIMEOUT_MS`, and
 * the allow-list's `_NETWORK_ALLOW`, `_NETWORK_DENY`, `_NETWORK_HOSTS`, `_NETWORK_MAX_CONNECTIONS` and
 * `_NETWORK_HANDSHAKE_TIMEOUT_MS`.
 *
 * @since 0.1.0
 * @category constructors
 */
export const environment = environmentOf(Settings)
