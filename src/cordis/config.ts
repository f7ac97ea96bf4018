/**
 * The plugin's configuration: one `effect/Schema` struct, published to Cordis as a Standard Schema.
 */
import type * as ParseResult from "effect/ParseResult"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as SchemaAST from "effect/SchemaAST"
import { ContainerSettings } from "../layers/containerSettings.js"
import * as LocalBashExecutor from "../layers/LocalBashExecutor.js"
import * as SandboxBashExecutor from "../layers/SandboxBashExecutor.js"
import { expectationOf, kindOf } from "../layers/settingsSchema.js"

const optional = <S extends Schema.Schema.Any>(schema: S) => Schema.optionalWith(schema, { exact: true })

/**
 * A settings field as Cordis takes it: optional, no default filled in (the layer fills them), and a
 * bad number named in the message (`timeoutMs must be a positive finite number, got -1`).
 */
const named = <S extends Schema.Schema.AnyNoContext>(key: string, schema: S) => {
  const expectation = expectationOf(schema)
  const message = kindOf(schema)._tag === "number" && Option.isSome(expectation)
    ? { [SchemaAST.MessageAnnotationId]: (issue: ParseResult.ParseIssue) => `${key} must be ${expectation.value}, got ${String(issue.actual)}` }
    : {}
  return optional(Schema.make<Schema.Schema.Type<S>, Schema.Schema.Encoded<S>>(SchemaAST.annotations(schema.ast, message)))
}

const localFields = LocalBashExecutor.Settings.fields
const sandboxFields = SandboxBashExecutor.Settings.fields
const containerFields = ContainerSettings.fields


/**
 * The configuration fields; every one is optional. The executor's come from its settings Schema
 * (`LocalBashExecutor.Settings`, `SandboxBashExecutor.Settings`), with their bounds and defaults.
 */
export const EffectBashConfigFields = Schema.Struct({
  /** Default working directory of commands (default: `process.cwd()` at call time). */
  cwd: named("cwd", localFields.cwd.from),
  /** Default foreground timeout. */
  timeoutMs: named("timeoutMs", localFields.timeoutMs.from),
  /** Cap on a call's timeout. */
  maxTimeoutMs: named("maxTimeoutMs", localFields.maxTimeoutMs.from),
  /** In-memory budget per stream. */
  maxOutputBytes: named("maxOutputBytes", localFields.maxOutputBytes.from),
  /** Largest spill file. */
  maxSpillBytes: named("maxSpillBytes", localFields.maxSpillBytes.from),
  /** Bound on all spill files together; the oldest finished go first. */
  maxSpillTotalBytes: named("maxSpillTotalBytes", localFields.maxSpillTotalBytes.from),
  /** SIGTERM → SIGKILL grace, and the bound on draining pipes. */
  graceMs: named("graceMs", localFields.graceMs.from),
  /** Keep spill files after the plugin unloads. */
  keepSpillFiles: named("keepSpillFiles", localFields.keepSpillFiles.from),
  /** Parent directory of the private spill directory (default: the OS temp directory). */
  spillParent: named("spillParent", localFields.spillParent.from),
  /** Inherited variable names kept even when they look like credentials. */
  envAllow: named("envAllow", localFields.envAllow.from),
  /** Extra case-insensitive patterns (regex sources) of inherited names to drop. */
  envDeny: named("envDeny", localFields.envDeny.from),
  /** Cap on concurrently running background processes. */
  maxBackground: named("maxBackground", localFields.maxBackground.from),
  /** Finished background processes kept tracked. */
  maxFinishedBackground: named("maxFinishedBackground", localFields.maxFinishedBackground.from),
  /** Offer `run_in_background` on the `bash` tool (default true). */
  enableRunInBackground: optional(Schema.Boolean),
  /** The harness home exported as `DSH_HOME` (default: `$DSH_HOME`, else `~/.dsh`). */
  dshHome: optional(Schema.String),
  /** Where session JSONL files live, when the host has no `sessionPersistence` service. */
  sessionJsonlDir: optional(Schema.String),
  /** Register the tools and the prompt section with a host tool registry (default true). */
  registerTools: optional(Schema.Boolean),
  /** Run each command in its own PID namespace on bubblewrap, without file confinement. */
  contain: named("contain", localFields.contain.from),
  /** The bubblewrap binary `contain` runs (default: `bwrap` from `PATH`). */
  bwrapPath: named("bwrapPath", localFields.bwrapPath.from),
  /** Spawn each command from the host process, without the launcher. */
  directSpawn: named("directSpawn", localFields.directSpawn.from),
  /** Confine commands with the sandboxing executor (present → `sandbox_permissions` is offered). */
  sandbox: optional(Schema.Struct({
    /** The default mode. */
    mode: sandboxFields.sandboxMode.from,
    /** The writable root for calls without a session (default: `cwd`). */
    workspaceRoot: named("workspaceRoot", sandboxFields.workspaceRoot.from),
    /** `none` cuts confined commands off the network. */
    network: named("network", sandboxFields.network.from),
    /** With `network: "none"`, still allow unix sockets (default false: a seccomp filter refuses them). */
    allowUnixSockets: named("allowUnixSockets", sandboxFields.allowUnixSockets.from),
    /** Paths hidden from confined commands (default: the credential stores; `~/` is the home). */
    hide: named("hide", sandboxFields.hide.from),
    /** The bubblewrap binary (default: found on `PATH`). */
    bwrapPath: named("bwrapPath", sandboxFields.bwrapPath.from)
  })),
  /** Run commands in containers on a Docker Engine, one per session (not together with `sandbox`). */
  container: optional(Schema.Struct({
    /** The image each session's container starts from (it needs `bash` and `sleep`). */
    image: containerFields.image,
    /** `none` (the default) or `bridge`. */
    network: named("network", containerFields.network.from),
    /** Memory limit of each container, in MiB. */
    memoryMb: named("memoryMb", containerFields.memoryMb.from),
    /** Process limit of each container. */
    pidsLimit: named("pidsLimit", containerFields.pidsLimit.from),
    /** CPUs each container may use. */
    cpus: named("cpus", containerFields.cpus.from),
    /** The user commands run as (`name`, `uid` or `uid:gid`). */
    user: named("user", containerFields.user.from),
    /** Mount the image's root file system read-only. */
    readOnlyRoot: named("readOnlyRoot", containerFields.readOnlyRoot.from),
    /** The engine's address (default: `DOCKER_HOST`, else the default socket). */
    dockerHost: named("dockerHost", containerFields.dockerHost.from),
    /** The host directory every container mounts (default: `cwd`; never `/`). */
    workspaceRoot: named("workspaceRoot", containerFields.workspaceRoot.from),
    /** Stop a container that ran nothing for this long. */
    idleStopMs: named("idleStopMs", containerFields.idleStopMs.from)
  })),
  /**
   * How a completion notice reaches an idle harness agent: `wakeup` opens a turn for it (at most 3 in
   * a row until the user speaks), `quiet` only injects it into the agent's next step (default `wakeup`).
   */
  completionDelivery: optional(
    Schema.String.pipe(
      Schema.filter((mode): mode is "wakeup" | "quiet" => mode === "wakeup" || mode === "quiet", {
        message: (issue) => `completionDelivery must be "wakeup" or "quiet", got ${JSON.stringify(issue.actual)}`
      })
    )
  )
}).annotations({ identifier: "EffectBashConfig" })

/**
 * The decoded configuration.
 *
 * @since 0.1.0
 * @category models
 */
export type EffectBashConfig = typeof EffectBashConfigFields.Type

const undefinedAsEmpty = Schema.transform(Schema.Unknown, Schema.Unknown, {
  strict: true,
  decode: (input) => input ?? {},
  encode: (output) => output
})

/**
 * The plugin's `Config`: a Standard Schema that accepts `undefined` (all defaults) and rejects an
 * unknown key or a bad value with an issue whose path and message name the field.
 *
 * @since 0.1.0
 * @category schemas
 */
export const Config = Schema.standardSchemaV1(Schema.compose(undefinedAsEmpty, EffectBashConfigFields), {
  errors: "all",
  onExcessProperty: "error"
})
