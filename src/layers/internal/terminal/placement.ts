/**
 * Where a terminal's shell runs, as its executor decides: an executor built on the core registers,
 * for the service it built, how it launches a call (its runner: bubblewrap with the call's policy,
 * masks and network, or none), and the terminals start their shells under that same launch. A
 * confining executor that registered nothing cannot host terminals, and the terminals refuse it.
 *
 * @internal
 */
import type * as Effect from "effect/Effect"
import type { BashExecutor, BashRequestError, SandboxUnavailableError } from "../../../services/BashExecutor.js"
import type { Launch } from "../executor/executorCore.js"

/** How an executor launches one call; a terminal is launched as a call of its owner. */
export interface TerminalPlacement {
  readonly launch: (spec: BashExecutor.Spec) => Effect.Effect<Launch, SandboxUnavailableError | BashRequestError>
}

// Keyed by the service object: the public port stays as it is, and a placement lives as long as it.
const placements = new WeakMap<BashExecutor["Type"], TerminalPlacement>()

/** Records how `executor` places a terminal. */
export const registerTerminalPlacement = (executor: BashExecutor["Type"], placement: TerminalPlacement): void => {
  placements.set(executor, placement)
}

/** How `executor` places a terminal, if it registered how. */
export const terminalPlacementOf = (executor: BashExecutor["Type"]): TerminalPlacement | undefined =>
  placements.get(executor)
