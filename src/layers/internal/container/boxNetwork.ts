/**
 * A container's allow-listed network: each box is on the engine's `none` network (only loopback)
 * and reaches the names on the list only through its session's proxies, the sandbox's HTTP CONNECT
 * and SOCKS5 servers ({@link makeNetworkProxy}) listening on unix sockets in a host directory bound
 * read-only into the box. The sandbox's bridge (`socat` relays on the box's 127.0.0.1:3128 and :1080)
 * runs in the box as its supervisor's uid, started when the box starts; the box's environment names
 * the relays (`HTTP_PROXY` and its kin). The image need not have `socat`: the host's, with the
 * libraries it links and their loader, is copied into the bound directory and run through that
 * loader, so the engine must run on this machine (a bind needs its files; the box its architecture).
 *
 * A session's calls share its box, so they share its proxies: a call reports the refusals made while
 * it runs, and a call's own allowances hold for the box while it runs.
 *
 * @internal
 */
import * as NodeChildProcess from "node:child_process"
import * as NodeFs from "node:fs"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"
import * as Effect from "effect/Effect"
import * as ExecutionStrategy from "effect/ExecutionStrategy"
import * as Exit from "effect/Exit"
import * as Scope from "effect/Scope"
import type { BashExecutor } from "../../../services/BashExecutor.js"
import type { ContainerEngine } from "../../../services/ContainerEngine.js"
import { ContainerEngineError } from "../../../services/ContainerEngine.js"
import { SpawnError } from "../../../services/ProcessSpawner.js"
import type { NetworkCall } from "../executor/executorCore.js"
import type { Entry, Policy } from "../network/allowList.js"
import type { Resolver } from "../network/admission.js"
import { bridgeArgv, proxyVariables } from "../network/bridge.js"
import type { RefusalLog } from "../network/proxy.js"
import { makeNetworkProxy, makeRefusalLog } from "../network/proxy.js"
import type { BoxAttachment } from "./Boxes.js"
import { supervisorShell } from "./wrapper.js"

/** Where the bound directories are inside a box. */
const inBox = { tools: "/.effect-bash-network/tools", proxies: "/.effect-bash-network/proxies" } as const

/** What a box network is made of. */
export interface BoxNetworkOptions {
  readonly policy: Policy
  readonly resolve: Resolver
  readonly maxConnections: number
  readonly handshakeTimeoutMs: number
  /** The host's `socat`, found on `PATH`. */
  readonly socatPath: string
}

/** The boxes' network: what each box gets, and each call's view of its session's proxies. */
export interface BoxNetwork {
  readonly facts: BashExecutor.NetworkFacts
  /** The box's variables: every client that honours them goes through the relays. */
  readonly env: Readonly<Record<string, string>>
  readonly attach: BoxAttachment
  /** A call's window on its session's proxies (started when the session has none yet), closed with the scope. */
  readonly call: (session: string, extraAllow: ReadonlyArray<Entry>) => Effect.Effect<NetworkCall, SpawnError, Scope.Scope>
}

/** The files `socat` needs, as `ldd` lists them: its libraries and the loader; none for a static `socat`. */
const linkedFiles = (socatPath: string): ReadonlyArray<string> => {
  let listing: string
  try {
    // Bounded, and synchronous: it ends (or is killed) before this returns.
    listing = NodeChildProcess.execFileSync("ldd", [socatPath], { encoding: "utf8", timeout: 5_000, killSignal: "SIGKILL", stdio: ["ignore", "pipe", "pipe"] })
  } catch (error) {
    // `ldd` answers a static executable with "not a dynamic executable" (and a non-zero exit).
    const said = String((error as { readonly stdout?: unknown }).stdout ?? "") + String((error as { readonly stderr?: unknown }).stderr ?? "")
    if (/not a dynamic executable|statically linked/.test(said)) return []
    throw error
  }
  return listing.split("\n").flatMap((line) => {
    const found = /(?:=>\s*)?(\/\S+)\s+\(0x/.exec(line)
    return found === null ? [] : [found[1]!]
  })
}

/**
 * Copies `socat`, its libraries and their loader into `dir`, with a `socat` script there that runs
 * it through that loader (so the image's own loader and libraries, if any, play no part).
 */
const copyRelay = (socatPath: string, dir: string) => {
  const files = linkedFiles(socatPath)
  const loader = loaderOf(files)
  NodeFs.mkdirSync(dir, { mode: 0o755 })
  const place = (from: string, name: string) => {
    NodeFs.copyFileSync(from, NodePath.join(dir, name))
    NodeFs.chmodSync(NodePath.join(dir, name), 0o755)
  }
  // A static `socat` runs as it is.
  if (files.length === 0) return place(socatPath, "socat")
  if (loader === undefined) throw new Error(`ldd names no loader for ${socatPath}`)
  for (const file of files) if (file !== loader) place(file, NodePath.basename(file))
  place(loader, "ld.so")
  place(socatPath, "socat.bin")
  NodeFs.writeFileSync(
    NodePath.join(dir, "socat"),
    `#!${supervisorShell}
exec ${inBox.tools}/ld.so --library-path ${inBox.tools} ${inBox.tools}/socat.bin "$@"
`,
    { mode: 0o755 }
  )
}

/** The loader among `files`: the one `ldd` lists without a `name =>`, named `ld-linux…` or `ld-musl…`. */
const loaderOf = (files: ReadonlyArray<string>): string | undefined =>
  files.find((file) => /^ld-(linux|musl)/.test(NodePath.basename(file)))

/**
 * The host side of the boxes' network, in the layer's scope: a directory holding the relay's
 * programs and each session's proxies' sockets, removed with the layer. Fails when `socat` or its
 * libraries cannot be copied.
 */
export const makeBoxNetwork = (engine: ContainerEngine.Service, options: BoxNetworkOptions): Effect.Effect<BoxNetwork, ContainerEngineError, Scope.Scope> =>
  Effect.gen(function*() {
    const layerScope = yield* Effect.scope
    const base = yield* Effect.acquireRelease(
      Effect.try({
        try: () => {
          const dir = NodeFs.mkdtempSync(NodePath.join(NodeOs.tmpdir(), "effect-bash-boxnet-"))
          // The relays run as the boxes' supervisor uid, which is no user of this host.
          NodeFs.chmodSync(dir, 0o755)
          return dir
        },
        catch: (cause) => new ContainerEngineError({ message: `cannot make the network proxies' directory: ${String(cause)}`, cause })
      }),
      (dir) => Effect.sync(() => NodeFs.rmSync(dir, { recursive: true, force: true }))
    )
    yield* Effect.try({
      try: () => copyRelay(options.socatPath, NodePath.join(base, "tools")),
      catch: (cause) =>
        new ContainerEngineError({ message: `cannot bring socat into the containers: ${cause instanceof Error ? cause.message : String(cause)}`, cause })
    })
    const proxy = makeNetworkProxy(options)
    const relayArgv = [
      supervisorShell,
      ...bridgeArgv({
        socatPath: `${inBox.tools}/socat`,
        httpSocket: `${inBox.proxies}/http.sock`,
        socksSocket: `${inBox.proxies}/socks.sock`
      }).slice(1)
    ]
    const lock = yield* Effect.makeSemaphore(1)
    const sessions = new Map<string, SessionProxies>()

    const sessionProxies = (session: string) =>
      lock.withPermits(1)(Effect.suspend(() => {
        const known = sessions.get(session)
        if (known !== undefined) return Effect.succeed(known)
        const dir = NodePath.join(base, String(sessions.size + 1))
        const state: SessionProxies = { dir, windows: new Set() }
        const extraAllow = () => [...state.windows].flatMap((window) => window.extraAllow)
        const onRefusal = (refusal: string) => {
          for (const window of state.windows) window.log.add(refusal)
        }
        const http = NodePath.join(dir, "http.sock")
        const socks = NodePath.join(dir, "socks.sock")
        return Effect.gen(function*() {
          const scope = yield* Scope.fork(layerScope, ExecutionStrategy.sequential)
          yield* Effect.try({
            try: () => NodeFs.mkdirSync(dir, { mode: 0o755 }),
            catch: (cause) => new SpawnError({ code: undefined, message: `the network proxies cannot start: ${String(cause)}`, cause })
          })
          yield* proxy.open(http, socks, extraAllow, onRefusal).pipe(
            Scope.extend(scope),
            Effect.mapError((error) => new SpawnError({ code: undefined, message: error.message })),
            Effect.onError((cause) => Scope.close(scope, Exit.failCause(cause)))
          )
          // The relays run as another uid than this host's: the sockets are for anyone who can reach the directory.
          yield* Effect.sync(() => {
            NodeFs.chmodSync(http, 0o666)
            NodeFs.chmodSync(socks, 0o666)
          })
          sessions.set(session, state)
          return state
        })
      }))

    const attach: BoxAttachment = {
      mounts: (session) =>
        sessionProxies(session).pipe(
          Effect.mapError((error) => new ContainerEngineError({ message: error.message })),
          Effect.map((state) => [
            { host: NodePath.join(base, "tools"), target: inBox.tools, readOnly: true },
            { host: state.dir, target: inBox.proxies, readOnly: true }
          ])
        ),
      started: (box, uid) =>
        engine.run(box, [...relayArgv, supervisorShell, "--norc", "--noprofile", "-c", "printf ready"], `${uid}:${uid}`).pipe(
          Effect.filterOrFail(
            (output) => output === "ready",
            (output) => new ContainerEngineError({ message: `the container's network relays did not start${output === "" ? "" : `: ${output.trim()}`}` })
          ),
          Effect.asVoid
        )
    }
    return {
      facts: { allow: options.policy.allow.map((entry) => entry.text), deny: options.policy.deny.map((entry) => entry.text) },
      env: proxyVariables,
      attach,
      call: (session, extraAllow) =>
        Effect.flatMap(sessionProxies(session), (state) =>
          Effect.acquireRelease(
            Effect.sync(() => {
              const window: Window = { extraAllow, log: makeRefusalLog() }
              state.windows.add(window)
              return window
            }),
            (window) => Effect.sync(() => state.windows.delete(window))
          ).pipe(Effect.map((window) => ({ refusals: window.log.lines }))))
    } satisfies BoxNetwork
  })

/** A session's proxies, and the calls running on them. */
interface SessionProxies {
  readonly dir: string
  readonly windows: Set<Window>
}

/** One call's view: its own allowances, and the refusals made while it runs. */
interface Window {
  readonly extraAllow: ReadonlyArray<Entry>
  readonly log: RefusalLog
}
