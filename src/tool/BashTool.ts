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
import { commandNulProblem, echoValue, workdirProblem } from "../services/internal/requestChecks.js"
import type { AgentTools } from "../services/AgentTools.js"
import * as AgentTool from "./AgentTool.js"
import { renderBackgroundStart, renderForeground } from "./renderBashResult.js"

/**
 * The modes a call may escalate to.
 *
 * @since 0.1.0
 * @category constants
 */
export const escalationTargets = ["workspace-write", "danger-full-access"] as const satisfies ReadonlyArray<
  BashExecutor.SandboxMode
>

const commandMessage = () => "invalid command: expected a non-empty string"
const descriptionMessage = () => "invalid description: expected a non-empty string"
const timeoutMessage = (actual: unknown) => `invalid timeoutMs: expected a positive number, got ${echoValue(actual)}`
const workdirMessage = (actual: unknown) => `invalid workdir: expected a non-empty string, got ${echoValue(actual)}`
const justificationMessage = () => "invalid justification: expected a non-empty sentence"

// Every field the tool knows, as published; a composition leaves some unadvertised (see `parametersFor`).
const fields = {
  command: AgentTool.required(
    AgentTool.expecting(Schema.String, "The command line to run with `bash -c`.", commandMessage).pipe(
      Schema.filter((command) => AgentTool.isNonBlank(command) || commandMessage()),
      Schema.filter((command) => commandNulProblem(command) ?? true)
    ),
    commandMessage
  ),
  description: AgentTool.required(
    AgentTool.expecting(
      Schema.String,
      "What the command does, in 5-10 words, shown to the user (e.g. \"List files in the src folder\").",
      descriptionMessage
    ).pipe(Schema.filter((description) => AgentTool.isNonBlank(description) || descriptionMessage())),
    descriptionMessage
  ),
  timeoutMs: AgentTool.optional(
    AgentTool.expecting(
      Schema.Number,
      "Foreground time limit in milliseconds; the executor applies its default and caps it.",
      timeoutMessage
    ).pipe(Schema.filter((timeoutMs) => AgentTool.isPositive(timeoutMs) || timeoutMessage(timeoutMs)))
  ),
  workdir: AgentTool.optional(
    AgentTool.expecting(
      Schema.String,
      "Directory to run in; a relative path is taken from the session's working directory. " +
        "Defaults to the session's working directory.",
      workdirMessage
    ).pipe(
      Schema.filter((workdir) => AgentTool.isNonBlank(workdir) || workdirMessage(workdir)),
      Schema.filter((workdir) => workdirProblem(workdir) ?? true)
    )
  ),
  run_in_background: AgentTool.optional(
    AgentTool.expecting(
      Schema.Boolean,
      "Start the command as a background task and return its id immediately.",
      (actual) => `invalid run_in_background: expected a boolean, got ${echoValue(actual)}`
    )
  ),
  sandbox_permissions: AgentTool.optional(
    AgentTool.expecting(
      Schema.Literal(...escalationTargets),
      "The wider sandbox mode this one call needs, after the sandbox denied it. " +
        "Requires `justification`; the user approves it.",
      (actual) =>
        `invalid sandbox_permissions: expected one of ${escalationTargets.map(echoValue).join(", ")}, got ${
          echoValue(actual)
        }`
    )
  ),
  justification: AgentTool.optional(
    AgentTool.expecting(
      Schema.String,
      "Required with `sandbox_permissions`: one sentence telling the user why this exact command " +
        "needs the wider access.",
      justificationMessage
    ).pipe(Schema.filter((justification) => AgentTool.isNonBlank(justification) || justificationMessage()))
  )
}

/**
 * The arguments of a `bash` call, as the model writes them. The names are the reference's:
 * `timeoutMs` is camel case here, while `task_output` takes `timeout_ms`.
 *
 * @since 0.1.0
 * @category models
 */
export interface Parameters {
  /** The command line, run with `bash -c` in a fresh non-interactive shell. */
  readonly command: string
  /** What the command does, in 5–10 words, shown to the user. */
  readonly description: string
  /**
   * The foreground time limit in milliseconds; the executor's default applies when absent and its
   * maximum caps it. A background task has none.
   */
  readonly timeoutMs?: number
  /** Where to run: a relative path is taken from the session's working directory. */
  readonly workdir?: string
  /**
   * Start a background task and answer with its id at once. Published only where background
   * execution is enabled.
   */
  readonly run_in_background?: boolean
  /**
   * The wider sandbox mode this one call needs, after a denial; the user approves it. Needs
   * `justification`. Published only where the executor confines and an `Approval` service is composed.
   */
  readonly sandbox_permissions?: (typeof escalationTargets)[number]
  /** Why this exact command needs the wider mode, one sentence shown to the user. */
  readonly justification?: string
}

/**
 * What a composition offers.
 *
 * @since 0.1.0
 * @category models
 */
export interface Policy {
  /** `run_in_background` is a parameter. */
  readonly background: boolean
  /** The executor confines: results can carry sandbox facts, and the description explains them. */
  readonly sandbox: boolean
  /**
   * A confined call may ask for a wider mode: `sandbox_permissions` and `justification` are published
   * and a denial carries the escalation hint. Only with `sandbox` and an `Approval` service composed,
   * since nothing else can grant it.
   */
  readonly escalation: boolean
  /** Commands run in containers, not on the host: the description and a prompt section say where. */
  readonly container?: BashExecutor.ContainerFacts | undefined
}

/**
 * The message for a background call while background execution is disabled.
 *
 * @since 0.1.0
 * @category constants
 */
export const backgroundDisabledMessage =
  "run_in_background is disabled for this deployment: run the command in the foreground"

const escalationUnavailableMessage =
  "sandbox_permissions is not available in this composition (no sandboxing executor to escalate)"

// The escalation as one step, after the other fields: both halves or neither, then the
// justification, then the mode (so two mistakes together read as before the typed parameters).
const escalation = AgentTool.composite(
  { sandbox_permissions: fields.sandbox_permissions, justification: fields.justification },
  (pair) =>
    pair.sandbox_permissions !== undefined && pair.justification === undefined
      ? "invalid escalation: sandbox_permissions requires a justification"
      : pair.justification !== undefined && pair.sandbox_permissions === undefined
      ? "invalid escalation: justification is only valid together with sandbox_permissions"
      : undefined,
  ["justification", "sandbox_permissions"]
)

// The same step, left out of the JSON Schema: a model that sends it anyway reads why it cannot be had.
const unpublishedEscalation = AgentTool.composite(
  {
    sandbox_permissions: AgentTool.unpublished(fields.sandbox_permissions),
    justification: AgentTool.unpublished(fields.justification)
  },
  escalation.rule,
  escalation.checkOrder
)

const commonFields = {
  command: fields.command,
  description: fields.description,
  timeoutMs: fields.timeoutMs,
  workdir: fields.workdir
}

/**
 * The parameters of one composition, checked in order: command, description, timeoutMs, workdir,
 * run_in_background, then the escalation as one step (both halves or neither, then the
 * justification, then the mode). An unadvertised `run_in_background: true` is refused in its turn.
 * Without a confining executor `sandbox_permissions` is refused in its turn and `justification`
 * ignored; with one but no approval (`escalation` off) both are checked as usual, unpublished, and
 * the escalation is then refused for want of an approval service.
 *
 * @since 0.1.0
 * @category constructors
 */
export const parametersFor = (
  policy: Policy
): AgentTool.Parameters<AgentTool.Exactly<Parameters, Schema.Struct.Type<typeof fields>>> => {
  const run_in_background = policy.background
    ? fields.run_in_background
    : AgentTool.unadvertised(backgroundDisabledMessage, (value) => value === true)
  if (!policy.sandbox) {
    return AgentTool.parameters({
      ...commonFields,
      run_in_background,
      sandbox_permissions: AgentTool.unadvertised(escalationUnavailableMessage, () => true)
    })
  }
  return AgentTool.parameters(
    { ...commonFields, run_in_background },
    policy.escalation ? escalation : unpublishedEscalation
  )
}

/**
 * A sandbox escalation the model asked for.
 *
 * @since 0.1.0
 * @category models
 */
export interface EscalationRequest {
  readonly mode: (typeof escalationTargets)[number]
  readonly justification: string
}

/**
 * The escalation of checked arguments, if they ask for one.
 *
 * @since 0.1.0
 * @category utils
 */
export const escalationOf = (args: Parameters): EscalationRequest | undefined =>
  args.sandbox_permissions === undefined || args.justification === undefined
    ? undefined
    : { mode: args.sandbox_permissions, justification: args.justification }

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
  sandbox: Schema.optionalWith(SandboxFacts, { exact: true })
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
 * What the `$DSH_*` variables are, in one paragraph of the description.
 *
 * @since 0.2.0
 * @category constants
 */
export const managedVariables =
  "Every command also gets variables named `$DSH_*`, set by the agent harness (DSH), not by the user: " +
  "`$DSH_HOME` is the harness's home directory, `$DSH_SHELL` is `1` in a shell this tool started, " +
  "`$DSH_SESSION_ID` is the calling session's id, and plugins may add more (such as `$DSH_SESSION_JSONL`, " +
  "the file the session is recorded in); read them, do not set them."

const networkText = (network: BashExecutor.ContainerFacts["network"]): string =>
  network === "none"
    ? "no network (only a loopback interface, so nothing can be downloaded)"
    : "the container engine's default network"

/**
 * Where commands run, in one sentence for the model: a container of the image, its network, and the
 * one directory shared with the user's machine.
 *
 * @since 0.2.0
 * @category utils
 */
export const containerText = (container: BashExecutor.ContainerFacts): string =>
  `Commands of the bash tool run inside a Docker container of the image ${JSON.stringify(container.image)}, ` +
  `not on the user's machine, with ${networkText(container.network)}: only the programs that image ` +
  `provides are there. The directory ${JSON.stringify(container.workspace)} is the user's, shared at the ` +
  "same path; a file written anywhere else stays in the container and is gone when the container is removed. " +
  "The file a truncation marker names is on the user's machine: a command sees it only under that directory."

/**
 * The `tool:bash:container` prompt section (order 106) of a composition whose commands run in
 * containers: where they run, what they can reach.
 *
 * @since 0.2.0
 * @category utils
 */
export const containerSection = (container: BashExecutor.ContainerFacts): AgentTools.PromptSection => ({
  name: "tool:bash:container",
  order: 106,
  text: containerText(container)
})

/**
 * What a sandbox's allow-listed network lets its commands reach, and what a refusal line means.
 *
 * @since 0.2.0
 * @category utils
 */
export const allowListText = (network: BashExecutor.NetworkFacts): string =>
  "Sandboxed commands reach the network only through a proxy that admits these names: " +
  `${network.allow.join(", ")}${network.deny.length === 0 ? "" : ` (never ${network.deny.join(", ")})`}. ` +
  "Clients that honour HTTP_PROXY, HTTPS_PROXY and ALL_PROXY (curl, git over http(s), npm, pip) work unchanged; " +
  "DNS lookups, UDP and direct connections fail. `[network: refused <name>:<port> — <reason>]` at the end of a " +
  "result means the proxy refused that connection: a policy decision, not a fault of the command, so do not " +
  "look for another way around it; tell the user which name the command needed."

/**
 * The `tool:bash:network` prompt section (order 107) of a sandbox with an allow-listed network.
 *
 * @since 0.2.0
 * @category utils
 */
export const networkSection = (network: BashExecutor.NetworkFacts): AgentTools.PromptSection => ({
  name: "tool:bash:network",
  order: 107,
  text: allowListText(network)
})

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
 * What the `tool:bash` prompt section adds for an agent that completion notices reach unprompted;
 * only a host that delivers them may add it.
 *
 * @since 0.1.0
 * @category constants
 */
export const noticePromise = "When a background task you started finishes, you are told without asking: a message " +
  "`background task <id> (...) finished [status: ...]` arrives, so keep working meanwhile instead of polling task_output."

/**
 * The `tool:bash` prompt text, with {@link noticePromise} where completion notices are delivered.
 *
 * @since 0.1.0
 * @category utils
 */
export const promptText = (options: { readonly notices: boolean }): string =>
  options.notices ? `${promptSection.text} ${noticePromise}` : promptSection.text

/**
 * The tool as one composition publishes it: {@link description}, {@link parametersFor} and
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
