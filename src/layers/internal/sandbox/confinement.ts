/**
 * The launches of the two bubblewrap-backed executors: containment for the local executor (a PID
 * namespace, no file confinement), and the sandbox's per-call confinement, which fails
 * closed when the runner is not usable.
 *
 * @internal
 */
import * as NodeFs from "node:fs"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"
import * as Either from "effect/Either"
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
import type { NetworkProxy } from "../network/proxy.js"
import { makeNetworkProxy, NetworkProxyError } from "../network/proxy.js"
import { policyEither, bridgeTools } from "../network/settings.js"
import { systemResolver } from "../network/admission.js"
import type { ProxiedNetwork } from "./bwrap.js"
import type { Entry } from "../network/allowList.js"
import { allCallEntries } from "../network/callEntries.js"

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
const sandboxConfinesByDefault = (config: SandboxBashExecutorConfig): boolean =>
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
    const proxies = yield* networkProxies(config)
    const profileOf = (
      mode: "read-only" | "workspace-write",
      workspaceRoot: string,
      network: "host" | "none" | ProxiedNetwork
    ) =>
      confinedWrapper({
        bwrapPath,
        mode,
        workspaceRoot,
        network,
        allowUnixSockets: config.allowUnixSockets,
        hidden: hiddenPaths(config.hide, home)
      })
    // One probe per round. A round whose probe met the mount race at every attempt fails the calls
    // waiting for it, and the next confined call starts a new round.
    let round: ProbeRound = { verdict: yield* Deferred.make<boolean>(), started: false }
    const probe = (current: ProbeRound) =>
      // A proxied network's bridge needs its call's proxies: the probe checks bubblewrap without them.
      probeRunner(
        profileOf("read-only", "/", proxies === undefined ? staticNetwork(config) : "none"),
        bwrapDialect,
        config.probeTimeoutMs,
        config.graceMs
      ).pipe(
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
        const extraAllow = yield* allCallEntries(spec, proxies !== undefined)
        if (proxies === undefined) {
          return {
            wrapper: profileOf(mode, root, staticNetwork(config)),
            sandbox: { mode, enforcement: "full", dialect: bwrapDialect }
          } satisfies Launch
        }
        const call = proxies.call(extraAllow)
        return {
          wrapper: profileOf(mode, root, call.network),
          sandbox: { mode, enforcement: "full", dialect: bwrapDialect },
          network: Effect.mapError(
            call.open,
            (error) => new SandboxUnavailableError({ mode, runnerFailure: error.message })
          )
        } satisfies Launch
      })
    const ready = Effect.suspend(() => (round.started ? Effect.asVoid(Deferred.await(round.verdict)) : Effect.void))
    return {
      sandboxMode: config.sandboxMode,
      workspaceRoot: config.workspaceRoot === undefined ? undefined : configuredRoot,
      ...(proxies === undefined ? {} : { network: proxies.facts }),
      launch,
      ready
    } satisfies Confinement
  })

/** The settings' network when it is no allow-list. */
const staticNetwork = (config: SandboxBashExecutorConfig): "host" | "none" =>
  config.network === "none" ? "none" : "host"

/**
 * The layer's proxies under an allow-list (none without one): a private directory for the calls'
 * sockets, removed with the layer, and the proxy state the calls share. Each call gets its own pair
 * of sockets, so its result reports only its own refusals.
 */
const networkProxies = (config: SandboxBashExecutorConfig) =>
  Effect.gen(function*() {
    // Checked as the settings were decoded: the layer never gets here with a bad list.
    const policy = Either.getOrThrow(policyEither(config))
    if (policy === undefined) return undefined
    const tools = Either.getOrThrow(bridgeTools(config))
    const proxy: NetworkProxy = makeNetworkProxy({
      policy,
      resolve: systemResolver,
      maxConnections: config.networkMaxConnections,
      handshakeTimeoutMs: config.networkHandshakeTimeoutMs
    })
    const base = yield* Effect.acquireRelease(
      Effect.sync(() => NodeFs.mkdtempSync(NodePath.join(NodeOs.tmpdir(), "effect-bash-net-"))),
      (dir) => Effect.sync(() => NodeFs.rmSync(dir, { recursive: true, force: true }))
    )
    let calls = 0
    return {
      facts: { allow: policy.allow.map((entry) => entry.text), deny: policy.deny.map((entry) => entry.text) },
      call: (extraAllow: ReadonlyArray<Entry>) => {
        const socketDir = NodePath.join(base, String(++calls))
        const network: ProxiedNetwork = {
          socketDir,
          httpSocket: NodePath.join(socketDir, "http.sock"),
          socksSocket: NodePath.join(socketDir, "socks.sock"),
          ...tools
        }
        const open = Effect.acquireRelease(
          Effect.try({
            try: () => NodeFs.mkdirSync(socketDir, { mode: 0o700 }),
            catch: (error) => new NetworkProxyError({ message: `the network proxies cannot start: ${String(error)}` })
          }),
          () => Effect.sync(() => NodeFs.rmSync(socketDir, { recursive: true, force: true }))
        ).pipe(Effect.zipRight(proxy.open(network.httpSocket, network.socksSocket, extraAllow)))
        return { network, open }
      }
    }
  })
