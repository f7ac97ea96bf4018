/**
 * The sandboxing executor's settings, described once: the local executor's Schema plus
 * the sandbox's own fields. A problem in a local field reads `bash-local: …`, in a sandbox field
 * `bash-sandbox: …`.
 */
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { SandboxMode } from "../services/BashExecutor.js"
import { LocalBashExecutorConfigError } from "./executorSettings.js"
import { decodeWith, Settings as LocalSettings } from "./executorSettings.js"
import { defaultHidden } from "./internal/sandbox/bwrap.js"
import { unixSocketFilterSupported } from "./internal/sandbox/seccomp.js"
import { policyOf } from "./internal/network/settings.js"
import { environmentOf, PositiveFinite, PositiveInt, setting } from "./settingsSchema.js"

/**
 * The allow-list form of `network`: the names a command may reach (`example.com`, `*.example.com`,
 * an IP literal, each with an optional `:port`), those refused first, the reason given for each
 * deny entry, and names pinned to an address.
 *
 * @since 0.2.0
 * @category schemas
 */
export const NetworkLists = Schema.Struct({
  allow: Schema.Array(Schema.String),
  deny: Schema.optional(Schema.Array(Schema.String)),
  denyReasons: Schema.optional(Schema.Record({ key: Schema.String, value: Schema.String })),
  hosts: Schema.optional(Schema.Record({ key: Schema.String, value: Schema.String }))
})

/**
 * The sandboxing executor's settings: the local executor's, plus the sandbox's own.
 *
 * @since 0.1.0
 * @category schemas
 */
export const Settings = Schema.Struct({
  ...LocalSettings.fields,
  /** The default mode (`sandboxMode` of the executor). */
  sandboxMode: Schema.optionalWith(
    SandboxMode.annotations({
      ...setting({
        env: "SANDBOX",
        flag: { name: "sandbox", description: (name) => `Confine commands with bubblewrap in this mode (env ${name})` }
      }),
      message: (issue) => ({
        message: `must be one of ${SandboxMode.literals.join(", ")}, got ${JSON.stringify(issue.actual)}`,
        override: true
      })
    }),
    { default: () => "read-only" as const }
  ),
  /** The writable root when a call carries no policy; the default workdir when absent. */
  workspaceRoot: Schema.optional(Schema.String.annotations(setting({
    env: "WORKSPACE_ROOT",
    flag: {
      name: "workspace-root",
      pseudo: "DIR",
      description: (name) => `Writable root under --sandbox workspace-write (env ${name}; default: the working directory)`
    }
  }))),
  /**
   * `none` gives every confined command its own empty network namespace; `{ allow, deny?, denyReasons?,
   * hosts? }` one whose only way out is a proxy that admits the names on `allow` (see docs/sandbox.md).
   */
  network: Schema.optionalWith(
    Schema.Union(Schema.Literal("host", "none"), NetworkLists).annotations({
      ...setting({
        env: "NETWORK",
        flag: { name: "network", description: (name) => `"none" cuts sandboxed commands off the network (env ${name})` }
      }),
      message: (issue) => ({
        message: `must be "host", "none" or { allow: [...] }, got ${JSON.stringify(issue.actual)}`,
        override: true
      })
    }),
    { default: () => "host" as const }
  ),
  /** The allow-list as a flat list (flags and variables): the same as `network: { allow }`. */
  networkAllow: Schema.optionalWith(
    Schema.Array(Schema.String).annotations(setting({
      env: "NETWORK_ALLOW",
      flag: {
        name: "network-allow",
        pseudo: "NAME",
        description: (name) =>
          `Sandboxed commands reach only these names, through a proxy: host, *.domain or IP, optional :port; repeatable (env ${name}, comma-separated)`
      }
    })),
    { default: () => [] }
  ),
  /** With {@link networkAllow}: names refused even when allowed. */
  networkDeny: Schema.optionalWith(
    Schema.Array(Schema.String).annotations(setting({
      env: "NETWORK_DENY",
      flag: {
        name: "network-deny",
        pseudo: "NAME",
        description: (name) => `With --network-allow, refuse these names first; repeatable (env ${name}, comma-separated)`
      }
    })),
    { default: () => [] }
  ),
  /** With {@link networkAllow}: `name=address` pins, the same as `network: { hosts }`. */
  networkHosts: Schema.optionalWith(
    Schema.Array(Schema.String).annotations(setting({
      env: "NETWORK_HOSTS",
      flag: {
        name: "network-host",
        pseudo: "NAME=ADDRESS",
        description: (name) =>
          `With --network-allow, the proxy connects NAME to ADDRESS without resolving it; repeatable (env ${name}, comma-separated)`
      }
    })),
    { default: () => [] }
  ),
  /** Under an allow-list, the most upstream connections open at once across all calls. */
  networkMaxConnections: Schema.optionalWith(PositiveInt.annotations(setting({ env: "NETWORK_MAX_CONNECTIONS" })), {
    default: () => 64
  }),
  /** Under an allow-list, the bound on a client's proxy handshake and on each upstream connect. */
  networkHandshakeTimeoutMs: Schema.optionalWith(
    PositiveFinite.annotations(setting({ env: "NETWORK_HANDSHAKE_TIMEOUT_MS" })),
    { default: () => 10_000 }
  ),
  /**
   * Under `network: "none"`, let commands open unix sockets (and so connect to any listener on a path
   * they can see, e.g. `docker.sock`); by default a seccomp filter refuses `socket(AF_UNIX, …)`.
   */
  allowUnixSockets: Schema.optionalWith(
    Schema.Boolean.annotations(setting({
      env: "ALLOW_UNIX_SOCKETS",
      flag: {
        name: "allow-unix-sockets",
        description: (name) => `With --network none, still allow unix sockets (env ${name})`
      }
    })),
    { default: () => false }
  ),
  /** Paths hidden from confined commands; `~/` is `home`. */
  hide: Schema.optionalWith(Schema.Array(Schema.String).annotations(setting({ env: "HIDE" })), {
    default: () => defaultHidden
  }),
  /** The home directory `~/` stands for; the host user's when absent. */
  home: Schema.optional(Schema.String),
  /** Bound on the runner's usability probe. */
  probeTimeoutMs: Schema.optionalWith(PositiveFinite.annotations(setting({ env: "PROBE_TIMEOUT_MS" })), {
    default: () => 5_000
  })
}).annotations({ identifier: "SandboxBashExecutor.Settings" })

/**
 * Every setting of the sandboxing executor, defaults filled in.
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

/** The name the sandbox internals use for the decoded settings. */
export type SandboxBashExecutorConfig = Settings

const decode = decodeWith(Settings, (field) => field in LocalSettings.fields ? "bash-local" : "bash-sandbox")

/**
 * Fills defaults and checks every setting. Calls without a workdir start in the workspace root when
 * only the root is configured.
 */
export const resolveSandboxConfig = (input: Settings.Input): Effect.Effect<Settings, LocalBashExecutorConfigError> =>
  decode({ ...input, cwd: input.cwd ?? input.workspaceRoot }).pipe(
    Effect.filterOrFail(
      (settings) =>
        (settings.network === "host" && settings.networkAllow.length === 0) || settings.allowUnixSockets ||
        unixSocketFilterSupported(),
      (settings) =>
        new LocalBashExecutorConfigError({
          field: "allowUnixSockets",
          message: `bash-sandbox: allowUnixSockets: network ${settings.network === "none" ? `"none"` : "with an allow-list"} refuses unix sockets with a seccomp filter for ` +
            `x86_64 and aarch64 only, not for this host (${process.arch}); set allowUnixSockets: true to keep them, ` +
            `or use network "host"`
        })
    ),
    Effect.tap((settings) => policyOf(settings))
  )

/**
 * The sandbox defaults, decoded from nothing.
 *
 * @since 0.1.0
 * @category constants
 */
export const defaults: Settings = Schema.decodeSync(Settings)({})

/**
 * The settings from `EFFECT_BASH_*` variables: the local executor's, plus `EFFECT_BASH_SANDBOX`
 * (the mode), `_WORKSPACE_ROOT`, `_NETWORK`, `_NETWORK_ALLOW`, `_NETWORK_DENY`, `_NETWORK_HOSTS`
 * (comma-separated), `_ALLOW_UNIX_SOCKETS`, `_HIDE` (comma-separated) and
 * `_PROBE_TIMEOUT_MS`.
 *
 * @since 0.1.0
 * @category constants
 */
export const environment = environmentOf(Settings)
