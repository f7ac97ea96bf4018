/**
 * The launches of the two bubblewrap-backed executors: containment for the local executor (a PID
 * namespace, no file confinement), and the sandbox's per-call confinement, which fails
 * closed when the runner is not usable.
 *
 * @internal
 */
import * as NodeOs from "node:os"
import type * as Scope from "effect/Scope"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import type { BashExecutor } from "../../../services/BashExecutor.js"
import { SandboxUnavailableError } from "../../../services/BashExecutor.js"
import { ProcessSpawner } from "../../../services/ProcessSpawner.js"
import type { Confinement, Launch } from "../executor/executorCore.js"
import { unconfined } from "../executor/executorCore.js"
import type { LocalBashExecutorConfig } from "../../executorSettings.js"
import { LocalBashExecutorConfigError } from "../../executorSettings.js"
import { canonicalDirSync } from "./canonicalDir.js"
import { bwrapDialect, confinedWrapper, containWrapper, hiddenPaths } from "./bwrap.js"
import type { SandboxBashExecutorConfig } from "../../sandboxSettings.js"
import { defaults as sandboxDefaults } from "../../sandboxSettings.js"
import { metMountRace, probeRunner } from "./probe.js"
import { runnerPath } from "./runnerPath.js"
import { writableRoots } from "./writableRoots.js"

/** A probe's verdict, and whether its probe has started. */
interface ProbeRound {
  readonly verdict: Deferred.Deferred<boolean>
  started: boolean
}

/**
 * The local executor's launch: unconfined, or contained when `contain` is set — then the runner is
 * probed now and the layer fails to build if it cannot start (never silently uncontained).
 */
export const localConfinement = (
  config: LocalBashExecutorConfig
): Effect.Effect<Confinement, LocalBashExecutorConfigError, ProcessSpawner> =>
  Effect.gen(function*() {
    if (!config.contain) return unconfined
    const wrapper = containWrapper(runnerPath(config.bwrapPath))
    const failure = yield* probeRunner(wrapper, bwrapDialect, sandboxDefaults.probeTimeoutMs, config.graceMs)
    if (failure !== undefined) {
      return yield* new LocalBashExecutorConfigError({
        field: "contain",
        message:
          `bash-local: contain needs bubblewrap, but ${JSON.stringify(config.bwrapPath)} cannot start (${failure}); install the bubblewrap package or turn contain off`
      })
    }
    const launch: Launch = { wrapper }
    return { sandboxMode: undefined, launch: () => Effect.succeed(launch) } satisfies Confinement
  })

/** Whether the sandbox runs a call that asks for no mode of its own under bubblewrap. */
export const sandboxConfinesByDefault = (config: SandboxBashExecutorConfig): boolean =>
  config.sandboxMode !== "danger-full-access"

/**
 * The sandbox's launch. The runner is probed once — as the layer is built when its default mode is
 * confined (so a host can await `ready` and then start commands without waiting), else on the first
 * confined call — and later calls reuse the answer, unless it was the mount race. The probe runs in
 * the layer's scope, so a caller interrupted while it runs (an abort) leaves it to finish for the
 * next caller.
 */
export const sandboxConfinement = (
  config: SandboxBashExecutorConfig
): Effect.Effect<Confinement, never, ProcessSpawner | Scope.Scope> =>
  Effect.gen(function*() {
    const spawner = yield* ProcessSpawner
    const layerScope = yield* Effect.scope
    const home = config.home ?? NodeOs.homedir()
    const bwrapPath = runnerPath(config.bwrapPath)
    const profileOf = (mode: "read-only" | "workspace-write", workspaceRoot: string) =>
      confinedWrapper({
        bwrapPath,
        mode,
        workspaceRoot,
        network: config.network,
        allowUnixSockets: config.allowUnixSockets,
        hidden: hiddenPaths(config.hide, home)
      })
    // One probe per round. A round whose probe met the mount race at every attempt fails the calls
    // waiting for it, and the next confined call starts a new round.
    let round: ProbeRound = { verdict: yield* Deferred.make<boolean>(), started: false }
    const probe = (current: ProbeRound) =>
      probeRunner(profileOf("read-only", "/"), bwrapDialect, config.probeTimeoutMs, config.graceMs).pipe(
        Effect.tap((failure) =>
          failure === undefined ? Effect.void : Effect.logWarning(`sandbox runner unusable: ${failure}`)
        ),
        Effect.flatMap((failure) =>
          Effect.zipRight(
            metMountRace(bwrapDialect, failure)
              ? Effect.map(Deferred.make<boolean>(), (verdict) => {
                round = { verdict, started: false }
              })
              : Effect.void,
            Deferred.succeed(current.verdict, failure === undefined)
          )
        ),
        Effect.provideService(ProcessSpawner, spawner)
      )
    // A round marked started always has its probe (the fork is not interrupted), which runs
    // interruptibly whatever the caller's region: its bound and the layer's close interrupt it.
    const startProbe = (current: ProbeRound) =>
      Effect.uninterruptible(Effect.suspend(() => {
        if (current.started) return Effect.void
        current.started = true
        return Effect.asVoid(Effect.forkIn(Effect.interruptible(probe(current)), layerScope))
      }))
    const usable = Effect.suspend(() => {
      const current = round
      return Effect.zipRight(startProbe(current), Deferred.await(current.verdict))
    })
    if (sandboxConfinesByDefault(config)) yield* startProbe(round)
    const contained: Launch = config.contain ? { wrapper: containWrapper(bwrapPath) } : {}
    const roots = writableRoots()
    const configuredRoot = canonicalDirSync(config.workspaceRoot ?? config.cwd ?? process.cwd())

    const launch = (spec: BashExecutor.Spec) =>
      Effect.gen(function*() {
        const mode = spec.sandboxPolicy?.mode ?? config.sandboxMode
        if (mode === "danger-full-access") return { ...contained, sandbox: { mode } } satisfies Launch
        if (!(yield* usable)) return yield* new SandboxUnavailableError({ mode })
        const given = spec.sandboxPolicy?.workspaceRoot ?? configuredRoot
        const root = mode === "workspace-write" ? yield* roots.grant(given) : given
        return {
          wrapper: profileOf(mode, root),
          sandbox: { mode, enforcement: "full", dialect: bwrapDialect }
        } satisfies Launch
      })
    const ready = Effect.suspend(() => (round.started ? Effect.asVoid(Deferred.await(round.verdict)) : Effect.void))
    return {
      sandboxMode: config.sandboxMode,
      workspaceRoot: config.workspaceRoot === undefined ? undefined : configuredRoot,
      launch,
      ready
    } satisfies Confinement
  })
