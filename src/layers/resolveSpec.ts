/**
 * `BashExecutor.resolve`: one implementation for the local executor and the test doubles that stand
 * in for it, and the only producer of the {@link BashExecutor.Spec} brand — with {@link checkSpec},
 * its twin for a spec an untyped caller built by hand.
 *
 * @internal
 */
import type * as Brand from "effect/Brand"
import * as Effect from "effect/Effect"
import type { BashExecutor } from "../services/BashExecutor.js"
import { AbortedBeforeSpawnError, BashRequestError } from "../services/BashExecutor.js"
import { commandNulProblem, echoValue, workdirProblem } from "../services/internal/requestChecks.js"
import type { LocalBashExecutorConfig } from "./executorSettings.js"
import { validateEnv } from "./internal/executor/environment.js"

/** The defaults a request is resolved against. */
export type ResolveDefaults = Pick<LocalBashExecutorConfig, "cwd" | "timeoutMs" | "maxTimeoutMs" | "maxOutputBytes">

/** A spec's fields without the brand: what an untyped caller can build by hand. */
type SpecFields = Omit<BashExecutor.Spec, Brand.BrandTypeId>

/** The brand's one constructor (the brand is a type only): applied to fields once they are checked. */
const checked = (fields: SpecFields): BashExecutor.Spec => fields as BashExecutor.Spec

const describe = (value: unknown): string => (typeof value === "number" ? String(value) : echoValue(value))

/** `value` when it is a positive finite number, else an error naming `field`. */
const positive = (field: string, value: unknown): Effect.Effect<number, BashRequestError> =>
  typeof value === "number" && Number.isFinite(value) && value > 0 ?
    Effect.succeed(value) :
    Effect.fail(
      new BashRequestError({ field, message: `invalid ${field}: expected a positive finite number, got ${describe(value)}` })
    )

/**
 * The checks left once the numbers are known to be positive, then the brand: a command or workdir the
 * OS could not take (a NUL byte, a workdir longer than the OS allows — so neither surfaces as a raw
 * spawn error), and `env`/`dshEnv` names each in their lane.
 */
const brandChecked = (spec: SpecFields): Effect.Effect<BashExecutor.Spec, BashRequestError> => {
  const command = typeof spec.command === "string" ? commandNulProblem(spec.command) : undefined
  if (command !== undefined) return Effect.fail(new BashRequestError({ field: "command", message: command }))
  const workdir = typeof spec.workdir === "string" ? workdirProblem(spec.workdir) : undefined
  if (workdir !== undefined) return Effect.fail(new BashRequestError({ field: "workdir", message: workdir }))
  const envError = validateEnv(spec.env, spec.dshEnv)
  return envError ? Effect.fail(envError) : Effect.succeed(checked(spec))
}

/**
 * Fills `workdir`, `timeoutMs` (capped at `maxTimeoutMs`) and `stdoutMaxBytes`, copies every other
 * given field, and names the field of a given non-positive or non-finite number, of a command or
 * workdir the OS could not take, or of an `env`/`dshEnv` name outside its lane (the result is a
 * branded spec, which `run` and `start` never check again).
 */
export const resolveSpec = (
  defaults: ResolveDefaults,
  request: BashExecutor.Request
): Effect.Effect<BashExecutor.Spec, BashRequestError> =>
  Effect.gen(function*() {
    const requested = request.timeoutMs === undefined ?
      defaults.timeoutMs :
      yield* positive("timeoutMs", request.timeoutMs)
    const stdoutMaxBytes = request.stdoutMaxBytes === undefined ?
      defaults.maxOutputBytes :
      yield* positive("stdoutMaxBytes", request.stdoutMaxBytes)
    const spec: SpecFields = {
      ...request,
      workdir: request.workdir ?? defaults.cwd ?? process.cwd(),
      timeoutMs: Math.min(requested, defaults.maxTimeoutMs),
      stdoutMaxBytes
    }
    return yield* brandChecked(spec)
  })

/**
 * A spec an untyped caller built or changed by hand (the Cordis `ctx.bash.run(spec)`), checked as
 * `resolve` checks a request and with the same errors — `timeoutMs` and `stdoutMaxBytes` positive and
 * finite, a command and workdir the OS can take, `env` and `dshEnv` names each in their lane — then
 * branded. Nothing is filled in or capped: the spec runs as given.
 */
export const checkSpec = (spec: SpecFields): Effect.Effect<BashExecutor.Spec, BashRequestError> =>
  Effect.gen(function*() {
    yield* positive("timeoutMs", spec.timeoutMs)
    yield* positive("stdoutMaxBytes", spec.stdoutMaxBytes)
    return yield* brandChecked(spec)
  })

/** Fails with `aborted before spawn: <reason>` when the spec's abort trigger has already fired. */
export const refuseIfAborted = (spec: BashExecutor.Spec): Effect.Effect<void, AbortedBeforeSpawnError> => {
  const signal = spec.signal
  if (signal === undefined || !signal.aborted) return Effect.void
  const reason = signal.reason instanceof Error ? signal.reason.message : String(signal.reason ?? "aborted")
  return Effect.fail(new AbortedBeforeSpawnError({ reason }))
}
