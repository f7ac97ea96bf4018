/**
 * The `bash` tool's definition: its parameters and its value as Schemas, what the model
 * reads about it, and the text and the cards of a value. Nothing here needs a service: the handler
 * that runs a call is composed by `AgentToolsLive`.
 *
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"
import type { BashExecutor } from "../services/BashExecutor.js"
import { SandboxMode } from "../services/BashExecutor.js"
import { mergeStreams } from "../services/internal/mergeStreams.js"
import type { AgentTools } from "../services/AgentTools.js"
import type * as AgentTool from "./AgentTool.js"
import { parametersFor } from "./internal/bashParameters.js"
import type { Parameters, Policy } from "./internal/bashParameters.js"
import { containerText, managedVariables } from "./internal/containerTexts.js"
import { renderBackgroundStart, renderForeground } from "./renderBashResult.js"

export type { Parameters, Policy } from "./internal/bashParameters.js"

const CollectedOutput = Schema.Struct({
  text: Schema.String,
  truncated: Schema.Boolean,
  spillPath: Schema.optionalWith(Schema.String, { exact: true })
})

const SandboxFacts = Schema.Struct({
  mode: SandboxMode,
  denied: Schema.Boolean,
  enforcement: Schema.optionalWith(Schema.String, { exact: true }),
  runnerFailed: Schema.optionalWith(Schema.Boolean, { exact: true }),
  networkRefusals: Schema.optionalWith(Schema.Array(Schema.String), { exact: true })
})

/**
 * A completed foreground process: `{ kind: "foreground", ...BashExecutor.RunResult }` (also what
 * `effect-bash run --json` prints).
 *
 * @since 0.1.0
 * @category schemas
 */
export const Foreground = Schema.Struct({
  kind: Schema.Literal("foreground"),
  exitCode: Schema.NullOr(Schema.Number),
  signal: Schema.NullOr(Schema.String),
  timedOut: Schema.Boolean,
  aborted: Schema.Boolean,
  timeoutMs: Schema.Number,
  stdout: CollectedOutput,
  stderr: CollectedOutput,
  sandbox: Schema.optionalWith(SandboxFacts, { exact: true }),
  networkRefusals: Schema.optionalWith(Schema.Array(Schema.String), { exact: true })
}) satisfies Schema.Schema<{ readonly kind: "foreground" } & BashExecutor.RunResult, any>

/**
 * A published background task.
 *
 * @since 0.1.0
 * @category schemas
 */
export const Background = Schema.Struct({
  kind: Schema.Literal("background"),
  taskId: Schema.String
})

/**
 * The canonical value of a `bash` call: what hosts store and replay, and what every
 * rendering and card is computed from.
 *
 * @since 0.1.0
 * @category schemas
 */
export const Value = Schema.Union(Foreground, Background)

/**
 * @since 0.1.0
 * @category models
 */
export type Value = typeof Value.Type

/**
 * The model-facing text of a value: the foreground text with its markers, or
 * `started background task <id>`. `escalationOffered` ({@link Policy.escalation}) adds the escalation
 * hint after a denial.
 *
 * @since 0.1.0
 * @category utils
 */
export const render = (value: Value, escalationOffered: boolean): string =>
  value.kind === "background" ? renderBackgroundStart(value.taskId) : renderForeground(value, escalationOffered)

const field = (args: unknown, key: string): unknown =>
  typeof args === "object" && args !== null ? (args as Readonly<Record<string, unknown>>)[key] : undefined

const stringField = (args: unknown, key: string): string | undefined => {
  const value = field(args, key)
  return typeof value === "string" ? value : undefined
}

const optionalText = <K extends string>(key: K, value: string | undefined): { readonly [P in K]?: string } =>
  (value === undefined ? {} : { [key]: value }) as { readonly [P in K]?: string }

/**
 * A call's card, from its arguments as stored (whatever they are): a terminal card, or an execute
 * card for a background start.
 *
 * @since 0.1.0
 * @category utils
 */
export const presentCall = (args: unknown): AgentTools.Presentation => {
  const title = stringField(args, "command") ?? "bash"
  const description = stringField(args, "description")
  if (field(args, "run_in_background") === true) {
    return { kind: "execute", title, ...optionalText("description", description) }
  }
  return {
    kind: "terminal",
    title,
    ...optionalText("description", description),
    ...optionalText("cwd", stringField(args, "workdir"))
  }
}

/**
 * A result's card: the terminal card with the raw output and the exit status of the value, or an
 * execute card naming the started task.
 *
 * @since 0.1.0
 * @category utils
 */
export const presentResult = (args: unknown, value: Value): AgentTools.Presentation => {
  const call = presentCall(args)
  if (value.kind === "background") {
    return { kind: "execute", title: call.title, ...optionalText("description", call.description), detail: `task ${value.taskId}` }
  }
  return {
    kind: "terminal",
    title: call.title,
    ...optionalText("description", call.description),
    ...optionalText("cwd", stringField(args, "workdir")),
    output: mergeStreams(value.stdout.text, value.stderr.text),
    exitCode: value.exitCode,
    signal: value.signal,
    timedOut: value.timedOut
  }
}

/**
 * The tool description; `container` adds where commands run, `background` the paragraph on background
 * tasks, `sandbox` one on sandbox denials, and `escalation` (instead) the one on asking for a wider mode.
 *
 * @since 0.1.0
 * @category utils
 */
export const description = (policy: Policy): string => {
  const parts = [
    "Runs one command with `bash -c` in a fresh, non-interactive shell and returns what it printed. " +
    "Nothing carries over between calls (no cd, no variables, no functions): pass `workdir` instead of `cd`, " +
    "and chain dependent steps in one command. Stdin is empty, so nothing may wait for input, and anything " +
    "the command leaves running (`cmd &`) is stopped when it ends.",
    "The result is stdout, then stderr under a `[stderr]` line, or `(no output)`. Lines at the end report what " +
    "happened: `[timed out after <ms>ms]`, `[killed by signal: <SIG>]`, or `[exit code: <N>]` for a non-zero " +
    "exit (no exit line means it exited 0). Long output keeps its end; " +
    "`[output truncated; full output: <path>]` names a file holding all of it.",
    managedVariables
  ]
  if (policy.container !== undefined) parts.push(containerText(policy.container))
  if (policy.background) {
    parts.push(
      "For a long-running command (a server, a watcher, a long build) set `run_in_background: true`: the call " +
        "answers at once with `started background task <id>`, no timeout applies, and you read its output with " +
        "`task_output` (which can wait for it to finish) and stop it with `task_kill`."
    )
  }
  if (policy.sandbox && !policy.escalation) {
    parts.push(
      "Commands run inside a file sandbox. `[sandbox: file access denied under <mode> mode]` means the sandbox " +
        "refused a file access: a policy decision, not a bug in the command. This deployment cannot widen the " +
        "sandbox, so do not look for another way around it: tell the user what was denied."
    )
  }
  if (policy.escalation) {
    parts.push(
      "Commands run inside a file sandbox. `[sandbox: file access denied under <mode> mode]` means the sandbox " +
        "refused a file access: a policy decision, not a bug in the command. Only after such a denial, and only " +
        "if a wider mode would let the command succeed, you may retry the same command once, in the same turn, " +
        "with `sandbox_permissions` set to the narrowest mode that suffices and a one-sentence `justification`; " +
        "the user is asked to approve that one call. Never ask for a wider mode up front or to be safe, and if " +
        "the user refuses, stop and explain instead of trying another way."
    )
  }
  if (policy.sandbox) {
    parts.push(
      "Under `workspace-write`, `/tmp` is private to each call: it starts empty, and what a command writes " +
        "there is gone when the call ends and never appears in the user's `/tmp`. Put files that must outlast the " +
        "call, or that the user should see, under the workspace root."
    )
  }
  return parts.join("\n\n")
}

/**
 * The `tool:bash` prompt section (order 105): check the exit-code marker on every result.
 *
 * @since 0.1.0
 * @category constants
 */
export const promptSection: AgentTools.PromptSection = {
  name: "tool:bash",
  order: 105,
  text: "Every bash result tells you how the command ended. Look for the `[exit code: N]` marker on every " +
    "result, and when a command failed, timed out or was killed, find out why before you build on it."
}

/**
 * The tool as one composition publishes it: {@link description}, its parameters and
 * {@link render} under the composition's {@link Policy}, the {@link Value} schema and the cards.
 *
 * @since 0.1.0
 * @category constructors
 */
export const definition = (policy: Policy): AgentTool.Definition<Parameters, Value> => ({
  name: "bash",
  description: description(policy),
  parameters: parametersFor(policy),
  success: Value,
  render: (value) => render(value, policy.escalation),
  presentCall,
  presentResult
})
