/**
 * The JSON that `effect-bash run --json` prints: the `bash` tool's canonical foreground value
 * (`{ kind: "foreground", ...BashExecutor.RunResult }`, CONTRACT §2), as a schema scripts can decode it with.
 *
 * @since 0.1.0
 */
import { Schema } from "effect"

const CollectedOutputJson = Schema.Struct({
  text: Schema.String,
  truncated: Schema.Boolean,
  spillPath: Schema.optionalWith(Schema.String, { exact: true })
})

const SandboxFactsJson = Schema.Struct({
  mode: Schema.Literal("read-only", "workspace-write", "danger-full-access"),
  denied: Schema.Boolean,
  enforcement: Schema.optionalWith(Schema.String, { exact: true }),
  runnerFailed: Schema.optionalWith(Schema.Boolean, { exact: true })
})

/**
 * One foreground run as `run --json` prints it.
 *
 * @since 0.1.0
 */
export const RunValueJson = Schema.Struct({
  kind: Schema.Literal("foreground"),
  exitCode: Schema.NullOr(Schema.Number),
  signal: Schema.NullOr(Schema.String),
  timedOut: Schema.Boolean,
  aborted: Schema.Boolean,
  timeoutMs: Schema.Number,
  stdout: CollectedOutputJson,
  stderr: CollectedOutputJson,
  sandbox: Schema.optionalWith(SandboxFactsJson, { exact: true })
})

/**
 * The decoded type of {@link RunValueJson}.
 *
 * @since 0.1.0
 */
export type RunValueJson = typeof RunValueJson.Type
