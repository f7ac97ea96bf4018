/**
 * Where a terminal's shell runs, as its executor decides: an executor registers, for the service it
 * built, how it launches a call (its runner: bubblewrap with the call's policy, masks and network, or
 * none), and the terminals start their shells under that same launch. An executor whose calls run
 * elsewhere (a container's box) also starts the shell on a PTY of its own, and says what a command
 * there inherits. A confining executor that registered nothing cannot host terminals, and the
 * terminals refuse it.
 *
 * @internal
 */
import type * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import type { BashExecutor, BashRequestError, SandboxUnavailableError } from "../../../services/BashExecutor.js"
import type { PtySpawner, PtySpawnError } from "../../../services/PtySpawner.js"
import type { Launch } from "../executor/executorCore.js"

/** How an executor launches one call; a terminal is launched as a call of its owner. */
export interface TerminalPlacement {
  readonly launch: (spec: BashExecutor.Spec) => Effect.Effect<Launch, SandboxUnavailableError | BashRequestError>
  /**
   * Starts the shell on the executor's own PTY (a TTY exec in the session's box) instead of the
   * `PtySpawner`'s; the launch's runner, if any, is then not used.
   */
  readonly spawn?: ((options: PtySpawner.Options) => Effect.Effect<PtySpawner.Pty, PtySpawnError, Scope.Scope>) | undefined
  /** The environment a shell inherits before the scrub: the host's when absent (as `Confinement.inheritedEnv`). */
  readonly inheritedEnv?: Readonly<Record<string, string | undefined>> | undefined
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
