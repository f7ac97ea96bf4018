/**
 * The container executor: the local executor's process mechanics, with each command run inside a
 * container on a Docker Engine — one container per session, created on first use from the configured
 * image and removed with the layer, with one host directory (`workspaceRoot`, else `cwd`) mounted at
 * the same path. Commands run as the owner of that directory, with no capability and no set-id bits
 * (root only when asked). Memory, process-count and CPU limits per container, no network (nor host
 * unix sockets) by default, an optional read-only root file system.
 *
 * @since 0.1.0
 */
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import * as NodePath from "@effect/platform-node/NodePath"
import type * as FileSystem from "@effect/platform/FileSystem"
import type * as Path from "@effect/platform/Path"
import type * as ConfigError from "effect/ConfigError"
import type * as Scope from "effect/Scope"
import * as Config from "effect/Config"
import * as Context from "effect/Context"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as NodeFs from "node:fs"
import * as NodeOs from "node:os"
import * as NodePathModule from "node:path"
import { BashExecutor } from "../services/BashExecutor.js"
import { BoxFiles } from "../services/BoxFiles.js"
import { ContainerEngine } from "../services/ContainerEngine.js"
import { ProcessSpawner } from "../services/ProcessSpawner.js"
import { LocalBashExecutorConfigError } from "./executorSettings.js"
import type { Settings } from "./containerSettings.js"
import { environment, resolveContainerConfig } from "./containerSettings.js"
import type { Workspace } from "./internal/container/Boxes.js"
import { Boxes, sweepDeadHosts } from "./internal/container/Boxes.js"
import { boundedEngine } from "./internal/container/boundedEngine.js"
import { makeBoxFiles } from "./internal/container/boxFiles.js"
import { makeContainerSpawner } from "./internal/container/ContainerSpawner.js"
import { makeDockerEngine } from "./internal/container/DockerEngine.js"
import { seccompProfile } from "./internal/container/seccompProfile.js"
import type { Confinement } from "./internal/executor/executorCore.js"
import { makeExecutorCore } from "./internal/executor/executorCore.js"
import { registerTerminalPlacement } from "./internal/terminal/placement.js"
import { makeBoxTerminals } from "./internal/container/boxTerminal.js"
import { makeBoxNetwork } from "./internal/container/boxNetwork.js"
import { systemResolver } from "./internal/network/admission.js"
import { allCallEntries } from "./internal/network/callEntries.js"
import { containerPolicyEither } from "./internal/network/settings.js"
import { runnerPath } from "./internal/sandbox/runnerPath.js"

export { ContainerSettings, environment, Settings } from "./containerSettings.js"

/**
 * The container executor cannot start: the engine is unreachable (the message names its address),
 * the image is missing (the message says how to build or pull it), or docker-modem is not installed.
 *
 * @since 0.1.0
 * @category errors
 */
export class ContainerUnavailableError extends Data.TaggedError("ContainerUnavailableError")<{
  /** The engine's address: `unix:///var/run/docker.sock`, `tcp://…`. */
  readonly engine: string
  readonly message: string
}> {}

/**
 * The workspace every container has, at `workspaceRoot`, else `cwd`: with `bind`, that host directory
 * (symlinks resolved for the bind, its own spelling inside); with `volume`, an engine volume at that
 * path. Never the whole file system.
 */
const workspaceOf = (config: Settings) =>
  Effect.gen(function*() {
    const field = config.workspaceRoot === undefined ? "cwd" : "workspaceRoot"
    const target = NodePathModule.resolve(config.workspaceRoot ?? config.cwd ?? process.cwd())
    if (config.workspace === "volume" || config.volume !== undefined) {
      if (target === NodePathModule.parse(target).root) {
        return yield* new LocalBashExecutorConfigError({
          field,
          message: `bash-container: ${field} is ${JSON.stringify(target)}, where the container's volume would hide its whole file system; ` +
            "set workspaceRoot (or cwd) to the project's path"
        })
      }
      return { kind: "volume" as const, target, name: config.volume }
    }
    const host = yield* Effect.try(() => NodeFs.realpathSync(target)).pipe(Effect.orElseSucceed(() => target))
    if (host === NodePathModule.parse(host).root) {
      return yield* new LocalBashExecutorConfigError({
        field,
        message: `bash-container: ${field} is ${JSON.stringify(target)}, so every container would mount the host's whole ` +
          "file system read-write; set workspaceRoot (or cwd) to the project's directory"
      })
    }
    // The layer's network relays, every host's spill files and other programs' temporary files are there.
    const temporary = yield* Effect.try(() => NodeFs.realpathSync(NodeOs.tmpdir())).pipe(Effect.orElseSucceed(() => NodeOs.tmpdir()))
    if (temporary === host || temporary.startsWith(host.endsWith("/") ? host : `${host}/`)) {
      return yield* new LocalBashExecutorConfigError({
        field,
        message: `bash-container: ${field} is ${JSON.stringify(target)}, which holds the host's temporary directory ` +
          `${JSON.stringify(temporary)} (where the containers' network relays and other programs' files are); set workspaceRoot (or cwd) to the project's directory`
      })
    }
    return { kind: "bind" as const, host, target }
  })

/** The user a setting names as root: the explicit request for root with the engine's capabilities. */
const namesRoot = (user: string): boolean => /^(root|0)(:.*)?$/.test(user)

/** The user of a `volume` workspace when none is configured: the usual first user of an image. */
const volumeUser = "1000:1000"

/**
 * Who the boxes run as: the configured user, else the owner of the mounted directory (so a command
 * makes nothing there its owner could not), else (a `volume`) uid 1000; as root only when the setting
 * asks for it.
 */
const identityOf = (config: Settings, workspace: Workspace) =>
  Effect.gen(function*() {
    if (config.user !== undefined) {
      const uid = /^\d+/.exec(config.user)?.[0]
      return { user: config.user, uid: uid === undefined ? undefined : Number(uid), root: namesRoot(config.user) }
    }
    if (workspace.kind === "volume") return { user: volumeUser, uid: 1000, root: false }
    const owner = yield* Effect.try(() => NodeFs.statSync(workspace.host)).pipe(
      Effect.mapError(() =>
        new LocalBashExecutorConfigError({
          field: config.workspaceRoot === undefined ? "cwd" : "workspaceRoot",
          message: `bash-container: cannot read the owner of ${JSON.stringify(workspace.host)}, whom the containers run as`
        })
      )
    )
    return { user: `${owner.uid}:${owner.gid}`, uid: owner.uid, root: false }
  })

/**
 * The boxes' allow-listed network, when the settings give one: the host's `socat` is brought into
 * each box, and the proxies' sockets are bound in, so the engine must share this machine's files —
 * one reached over a unix socket. Fails the build naming `networkAllow` (or `network`) otherwise.
 */
const networkOf = (config: Settings, engine: ContainerEngine.Service) =>
  Effect.gen(function*() {
    // Checked as the settings were decoded.
    const policy = Either.getOrThrow(containerPolicyEither(config))
    if (policy === undefined) return undefined
    const field = typeof config.network === "object" ? "network" : "networkAllow"
    if (!engine.address.startsWith("unix://")) {
      return yield* new LocalBashExecutorConfigError({
        field,
        message: `bash-container: ${field}: an allow-list needs an engine on this machine, reached over a unix socket ` +
          `(its containers reach the proxies through sockets bound in from this machine); the engine at ${engine.address} ` +
          `cannot see this machine's files: use network "none" or "bridge" there`
      })
    }
    const socatPath = runnerPath("socat")
    if (!socatPath.includes("/")) {
      return yield* new LocalBashExecutorConfigError({
        field,
        message: `bash-container: ${field}: an allow-list needs socat on PATH, which the containers' relays run ` +
          "(Debian/Ubuntu: apt-get install socat)"
      })
    }
    return yield* makeBoxNetwork(engine, {
      policy,
      resolve: systemResolver,
      maxConnections: config.networkMaxConnections,
      handshakeTimeoutMs: config.networkHandshakeTimeoutMs,
      socatPath
    }).pipe(
      Effect.mapError((error) => new ContainerUnavailableError({ engine: engine.address, message: error.message }))
    )
  })

const build = (settings: Settings.Input, engineOf: (config: Settings) => Effect.Effect<ContainerEngine.Service, ContainerUnavailableError, Scope.Scope>) =>
  Effect.gen(function*() {
    const config = yield* resolveContainerConfig(settings)
    if (settings.workspace === "bind" && config.volume !== undefined) {
      return yield* new LocalBashExecutorConfigError({
        field: "volume",
        message: `bash-container: volume names an engine volume (${JSON.stringify(config.volume)}), which is a "volume" workspace, not "bind"`
      })
    }
    const workspace = yield* workspaceOf(config)
    // Whichever engine it is, no request to it waits past the bound.
    const engine = boundedEngine(yield* engineOf(config), config.engineTimeoutMs)
    const unavailable = (message: string) => new ContainerUnavailableError({ engine: engine.address, message })
    yield* engine.ping.pipe(Effect.mapError((error) => unavailable(error.message)))
    const found = yield* engine.hasImage(config.image).pipe(Effect.mapError((error) => unavailable(error.message)))
    if (!found) {
      return yield* unavailable(
        `image ${JSON.stringify(config.image)} is not on the Docker Engine at ${engine.address}: ` +
          `build it (docker build -t ${config.image} DIR) or pull it (docker pull ${config.image})`
      )
    }
    // A limit the engine would refuse at every container's create fails the layer, naming the field.
    if (config.cpus !== undefined) {
      const cpus = yield* engine.cpuCount.pipe(Effect.mapError((error) => unavailable(error.message)))
      if (config.cpus > cpus) {
        return yield* new LocalBashExecutorConfigError({
          field: "cpus",
          message: `bash-container: cpus is ${config.cpus}, more than the ${cpus} CPUs of the Docker Engine at ${engine.address}`
        })
      }
    }
    const identity = yield* identityOf(config, workspace)
    const network = yield* networkOf(config, engine)
    yield* sweepDeadHosts(engine)
    const boxes = yield* Boxes.make(engine, {
      image: config.image,
      network: network === undefined ? config.network as "none" | "bridge" : "none",
      ...(network === undefined ? {} : { env: network.env, attach: network.attach }),
      memoryMb: config.memoryMb,
      pidsLimit: config.pidsLimit,
      cpus: config.cpus,
      user: identity.user,
      uid: identity.uid,
      dropCapabilities: !identity.root,
      // The relays of an allow-listed network connect to the proxies' unix sockets.
      seccompProfile: seccompProfile({ blockUnixSockets: config.network === "none" && network === undefined, blockSetId: !identity.root }),
      readOnlyRootfs: config.readOnlyRoot,
      workspace,
      idleStopMs: config.idleStopMs
    })
    const spawner = makeContainerSpawner({
      engine,
      boxes,
      memoryMb: config.memoryMb,
      startTimeoutMs: config.engineTimeoutMs,
      scope: yield* Effect.scope
    })
    const files = makeBoxFiles({ engine, boxes, workspace: workspace.target, user: identity.user })
    // The box has its own environment (the image's): nothing of the host's is inherited.
    const confinement: Confinement = {
      sandboxMode: undefined,
      workspaceRoot: config.workspaceRoot,
      container: {
        image: config.image,
        network: network === undefined ? config.network as "none" | "bridge" : "allow-list",
        workspace: workspace.target,
        workspaceKind: workspace.kind
      },
      ...(network === undefined ? {} : { network: network.facts }),
      launch: network === undefined
        ? () => Effect.succeed({})
        : (spec) =>
          Effect.map(allCallEntries(spec, true), (extraAllow) => ({
            network: network.call(spec.dshEnv?.DSH_SESSION_ID ?? "", extraAllow)
          })),
      inheritedEnv: {}
    }
    const executor = yield* makeExecutorCore(config, confinement).pipe(Effect.provideService(ProcessSpawner, spawner))
    // A terminal's shell is a TTY exec in its session's box, with the calls' environment and network.
    registerTerminalPlacement(executor, { ...confinement, spawn: makeBoxTerminals({ engine, boxes }) })
    return Context.make(BashExecutor, executor).pipe(Context.add(BoxFiles, files))
  })

/**
 * The container executor over the file system in context: checks `settings` (failing with the first
 * bad field), reaches the engine, checks the image, removes the containers of dead hosts and starts
 * the executor in the current scope; its containers are removed when the scope closes.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (
  settings: Settings.Input
): Effect.Effect<
  BashExecutor["Type"],
  LocalBashExecutorConfigError | ContainerUnavailableError,
  FileSystem.FileSystem | Path.Path | Scope.Scope
> =>
  Effect.map(buildOnDocker(settings), Context.get(BashExecutor))

const buildOnDocker = (settings: Settings.Input) =>
  build(settings, (config) =>
    makeDockerEngine(config.dockerHost, config.engineTimeoutMs).pipe(
      Effect.mapError((error) =>
        new ContainerUnavailableError({ engine: config.dockerHost ?? process.env.DOCKER_HOST ?? "", message: error.message })
      )
    ))

const buildOnEngine = (settings: Settings.Input) =>
  Effect.flatMap(ContainerEngine, (engine) => build(settings, () => Effect.succeed(engine)))

/**
 * The container executor on the {@link ContainerEngine} in context (`dockerHost` is then not read),
 * as {@link make} does it on the Docker Engine.
 *
 * @since 0.2.0
 * @category constructors
 */
export const makeWithEngine = (
  settings: Settings.Input
): Effect.Effect<
  BashExecutor["Type"],
  LocalBashExecutorConfigError | ContainerUnavailableError,
  ContainerEngine | FileSystem.FileSystem | Path.Path | Scope.Scope
> => Effect.map(buildOnEngine(settings), Context.get(BashExecutor))

/**
 * The container executor on Node, with the {@link BoxFiles} service on its boxes (since 0.2.0).
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (
  settings: Settings.Input
): Layer.Layer<BashExecutor | BoxFiles, LocalBashExecutorConfigError | ContainerUnavailableError> =>
  Layer.scopedContext(buildOnDocker(settings)).pipe(Layer.provide(Layer.merge(NodeFileSystem.layer, NodePath.layer)))

/**
 * The container executor on Node, on the {@link ContainerEngine} in context (another engine, or a
 * fake one: `FakeContainerEngine` in `effect-bash/testing`), with the {@link BoxFiles} service on its boxes.
 *
 * @since 0.2.0
 * @category layers
 */
export const layerWithEngine = (
  settings: Settings.Input
): Layer.Layer<BashExecutor | BoxFiles, LocalBashExecutorConfigError | ContainerUnavailableError, ContainerEngine> =>
  Layer.scopedContext(buildOnEngine(settings)).pipe(Layer.provide(Layer.merge(NodeFileSystem.layer, NodePath.layer)))

/**
 * The container executor with its settings read through `Config`; without an argument it reads the
 * `EFFECT_BASH_*` variables ({@link environment}), `EFFECT_BASH_CONTAINER_IMAGE` among them.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerConfig = (
  config: Config.Config.Wrap<Settings.Input> = environment
): Layer.Layer<BashExecutor | BoxFiles, LocalBashExecutorConfigError | ContainerUnavailableError | ConfigError.ConfigError> =>
  Layer.unwrapEffect(Effect.map(Config.unwrap(config), layer))
