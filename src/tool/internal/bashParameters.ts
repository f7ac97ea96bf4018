/**
 * The `bash` tool's parameters: the Schema of each field, the ones one composition publishes
 * (`parametersFor`), and the escalation a checked call asks for. `BashTool` publishes the types; the
 * rest is the tool's own.
 *
 * @internal
 */
import * as Schema from "effect/Schema"
import type { BashExecutor } from "../../services/BashExecutor.js"
import { commandNulProblem, echoValue, workdirProblem } from "../../services/internal/requestChecks.js"
import * as AgentTool from "../AgentTool.js"
import { maxNetworkNames, networkApprovalTexts } from "./networkApprovalTexts.js"

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

const justificationField = (description: string) =>
  AgentTool.optional(
    AgentTool.expecting(Schema.String, description, justificationMessage).pipe(
      Schema.filter((justification) => AgentTool.isNonBlank(justification) || justificationMessage())
    )
  )

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
  justification: justificationField(
    "Required with `sandbox_permissions`: one sentence telling the user why this exact command " +
      "needs the wider access."
  ),
  network_access: AgentTool.optional(
    AgentTool.expecting(Schema.Array(Schema.String), networkApprovalTexts.parameter, networkApprovalTexts.invalid).pipe(
      Schema.filter((names) =>
        (names.length >= 1 && names.length <= maxNetworkNames && names.every(AgentTool.isNonBlank)) ||
        networkApprovalTexts.invalid(names)
      )
    )
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
  /** Why this exact command needs the wider mode (or the names), one sentence shown to the user. */
  readonly justification?: string
  /**
   * Names this one call needs beyond the executor's network allow-list, after a refusal; the user
   * approves them for the call or for the session. Needs `justification`. Published only where the
   * executor has an allow-listed network and an `Approval` service is composed.
   *
   * @since 0.2.0
   */
  readonly network_access?: ReadonlyArray<string>
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
  /**
   * A call may ask the user for names beyond the executor's network allow-list: `network_access` is
   * published. Only with an allow-listed network and an `Approval` service composed.
   *
   * @since 0.2.0
   */
  readonly networkApproval?: boolean | undefined
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

/** `network_access` where it cannot be had: refused in its turn, whatever its value. */
const unavailableNetworkAccess = AgentTool.unadvertised(networkApprovalTexts.unavailable, () => true)

/**
 * The escalation and the network request as one step, where both are offered (`withEscalation`) or
 * only the network request: each needs the justification, which needs one of them.
 */
const withNetworkAccess = (withEscalation: boolean) =>
  AgentTool.composite(
    {
      sandbox_permissions: withEscalation
        ? fields.sandbox_permissions
        : AgentTool.unadvertised(escalationUnavailableMessage, () => true),
      network_access: fields.network_access,
      justification: justificationField(networkApprovalTexts.justification(withEscalation))
    },
    (given) =>
      withEscalation && given.sandbox_permissions !== undefined && given.justification === undefined
        ? "invalid escalation: sandbox_permissions requires a justification"
        : given.network_access !== undefined && given.justification === undefined
        ? networkApprovalTexts.needsJustification
        : given.justification !== undefined && given.network_access === undefined &&
            (!withEscalation || given.sandbox_permissions === undefined)
        ? networkApprovalTexts.justificationAlone(withEscalation)
        : undefined,
    ["justification", "sandbox_permissions", "network_access"]
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
  if (policy.networkApproval === true) {
    return AgentTool.parameters({ ...commonFields, run_in_background }, withNetworkAccess(policy.sandbox && policy.escalation))
  }
  if (!policy.sandbox) {
    return AgentTool.parameters({
      ...commonFields,
      run_in_background,
      sandbox_permissions: AgentTool.unadvertised(escalationUnavailableMessage, () => true),
      network_access: unavailableNetworkAccess
    })
  }
  return AgentTool.parameters(
    { ...commonFields, run_in_background, network_access: unavailableNetworkAccess },
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
