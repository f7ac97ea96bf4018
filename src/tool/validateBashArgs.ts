/**
 * Validation of the model's `bash` arguments (CONTRACT §2), with the exact messages. The schema the
 * model sees is loose on purpose: every check happens here, so the model reads these messages.
 *
 * @since 0.1.0
 */
import { Either } from "effect"
import type { BashExecutor } from "../services/BashExecutor.js"
import { commandNulProblem, workdirProblem } from "../services/requestChecks.js"
import { argumentRecord, isNonBlank, isPositiveNumber, quoted } from "./argChecks.js"

/**
 * The modes a call may escalate to.
 *
 * @since 0.1.0
 */
export const escalationTargets = ["workspace-write", "danger-full-access"] as const satisfies ReadonlyArray<BashExecutor.SandboxMode>

/**
 * A sandbox escalation the model asked for.
 *
 * @since 0.1.0
 */
export interface EscalationRequest {
  readonly mode: (typeof escalationTargets)[number]
  readonly justification: string
}

/**
 * Validated `bash` arguments; every other key the model sent is gone.
 *
 * @since 0.1.0
 */
export interface BashArgs {
  readonly command: string
  readonly description: string
  readonly timeoutMs?: number
  readonly workdir?: string
  readonly runInBackground: boolean
  readonly escalation?: EscalationRequest
}

/**
 * What this composition advertises.
 *
 * @since 0.1.0
 */
export interface BashArgsPolicy {
  /** `run_in_background` is a parameter. */
  readonly background: boolean
  /** `sandbox_permissions` and `justification` are parameters (the executor confines). */
  readonly sandbox: boolean
}

/**
 * The message for a background call while background execution is disabled.
 *
 * @since 0.1.0
 */
export const backgroundDisabledMessage =
  "run_in_background is disabled for this deployment: run the command in the foreground"

const isEscalationTarget = (value: unknown): value is EscalationRequest["mode"] =>
  (escalationTargets as ReadonlyArray<unknown>).includes(value)

const validateEscalation = (
  input: Readonly<Record<string, unknown>>,
  policy: BashArgsPolicy
): Either.Either<EscalationRequest | undefined, string> => {
  const mode = input["sandbox_permissions"]
  const justification = input["justification"]
  if (!policy.sandbox) {
    return mode === undefined
      ? Either.right(undefined)
      : Either.left("sandbox_permissions is not available in this composition (no sandboxing executor to escalate)")
  }
  if (mode === undefined && justification === undefined) return Either.right(undefined)
  if (justification === undefined) return Either.left("invalid escalation: sandbox_permissions requires a justification")
  if (mode === undefined) {
    return Either.left("invalid escalation: justification is only valid together with sandbox_permissions")
  }
  if (!isNonBlank(justification)) return Either.left("invalid justification: expected a non-empty sentence")
  if (!isEscalationTarget(mode)) {
    return Either.left(
      `invalid sandbox_permissions: expected one of ${escalationTargets.map(quoted).join(", ")}, got ${quoted(mode)}`
    )
  }
  return Either.right({ mode, justification })
}

/**
 * Checks the model's arguments in a fixed order (command, description, timeoutMs, workdir,
 * run_in_background, escalation); the first problem is the message.
 *
 * @since 0.1.0
 */
export const validateBashArgs = (raw: unknown, policy: BashArgsPolicy): Either.Either<BashArgs, string> => {
  const input = argumentRecord(raw)
  const { command, description, timeoutMs, workdir } = input
  const background = input["run_in_background"]
  if (!isNonBlank(command)) return Either.left("invalid command: expected a non-empty string")
  const commandProblem = commandNulProblem(command)
  if (commandProblem !== undefined) return Either.left(commandProblem)
  if (!isNonBlank(description)) return Either.left("invalid description: expected a non-empty string")
  if (timeoutMs !== undefined && !isPositiveNumber(timeoutMs)) {
    return Either.left(`invalid timeoutMs: expected a positive number, got ${quoted(timeoutMs)}`)
  }
  if (workdir !== undefined && !isNonBlank(workdir)) {
    return Either.left(`invalid workdir: expected a non-empty string, got ${quoted(workdir)}`)
  }
  const pathProblem = workdir === undefined ? undefined : workdirProblem(workdir)
  if (pathProblem !== undefined) return Either.left(pathProblem)
  if (policy.background && background !== undefined && typeof background !== "boolean") {
    return Either.left(`invalid run_in_background: expected a boolean, got ${quoted(background)}`)
  }
  if (!policy.background && background === true) return Either.left(backgroundDisabledMessage)
  return Either.map(validateEscalation(input, policy), (escalation) => ({
    command,
    description,
    ...(typeof timeoutMs === "number" ? { timeoutMs } : {}),
    ...(typeof workdir === "string" ? { workdir } : {}),
    runInBackground: background === true,
    ...(escalation !== undefined ? { escalation } : {})
  }))
}
