/**
 * The plugin's configuration: one `effect/Schema` struct, published to Cordis as a Standard Schema.
 *
 * @since 0.1.0
 */
import { Schema } from "effect"

const positive = (field: string) =>
  Schema.Number.pipe(
    Schema.filter((n) => (Number.isFinite(n) && n > 0) || `${field} must be a positive finite number, got ${n}`)
  )

const optional = <S extends Schema.Schema.Any>(schema: S) => Schema.optionalWith(schema, { exact: true })

/**
 * The configuration fields; every one is optional.
 *
 * @since 0.1.0
 */
export const EffectBashConfigFields = Schema.Struct({
  /** Default working directory of commands (default: `process.cwd()` at call time). */
  cwd: optional(Schema.String),
  /** Default foreground timeout (default 120000). */
  timeoutMs: optional(positive("timeoutMs")),
  /** Cap on a call's timeout (default 600000). */
  maxTimeoutMs: optional(positive("maxTimeoutMs")),
  /** In-memory budget per stream (default 64000). */
  maxOutputBytes: optional(positive("maxOutputBytes")),
  /** Largest spill file (default 64 MiB). */
  maxSpillBytes: optional(positive("maxSpillBytes")),
  /** Bound on all spill files together; the oldest finished go first (default 1 GiB). */
  maxSpillTotalBytes: optional(positive("maxSpillTotalBytes")),
  /** SIGTERM → SIGKILL grace, and the bound on draining pipes (default 3000). */
  graceMs: optional(positive("graceMs")),
  /** Keep spill files after the plugin unloads (default false). */
  keepSpillFiles: optional(Schema.Boolean),
  /** Parent directory of the private spill directory (default: the OS temp directory). */
  spillParent: optional(Schema.String),
  /** Inherited variable names kept even when they look like credentials. */
  envAllow: optional(Schema.Array(Schema.String)),
  /** Extra case-insensitive patterns (regex sources) of inherited names to drop. */
  envDeny: optional(Schema.Array(Schema.String)),
  /** Cap on concurrently running background processes (default 16). */
  maxBackground: optional(positive("maxBackground")),
  /** Finished background processes kept tracked (default 64). */
  maxFinishedBackground: optional(positive("maxFinishedBackground")),
  /** Offer `run_in_background` on the `bash` tool (default true). */
  enableRunInBackground: optional(Schema.Boolean),
  /** The harness home exported as `DSH_HOME` (default: `$DSH_HOME`, else `~/.dsh`). */
  dshHome: optional(Schema.String),
  /** Where session JSONL files live, when the host has no `sessionPersistence` service. */
  sessionJsonlDir: optional(Schema.String),
  /** Register the tools and the prompt section with a host tool registry (default true). */
  registerTools: optional(Schema.Boolean),
  /** Run each command in its own PID namespace on bubblewrap, without file confinement (default false). */
  contain: optional(Schema.Boolean),
  /** Confine commands with the sandboxing executor (present → `sandbox_permissions` is offered). */
  sandbox: optional(Schema.Struct({
    /** The default mode. */
    mode: Schema.Literal("read-only", "workspace-write", "danger-full-access"),
    /** The writable root for calls without a session (default: `cwd`). */
    workspaceRoot: optional(Schema.String),
    /** `none` cuts confined commands off the network (default `host`). */
    network: optional(Schema.Literal("host", "none")),
    /** Paths hidden from confined commands (default: the credential stores; `~/` is the home). */
    hide: optional(Schema.Array(Schema.String)),
    /** The bubblewrap binary (default `bwrap` from `PATH`). */
    bwrapPath: optional(Schema.String)
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
 */
export const Config = Schema.standardSchemaV1(Schema.compose(undefinedAsEmpty, EffectBashConfigFields), {
  errors: "all",
  onExcessProperty: "error"
})
