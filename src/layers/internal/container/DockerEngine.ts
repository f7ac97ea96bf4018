/**
 * The container-engine port on the Docker Engine API (Docker, or Podman's API socket), through
 * docker-modem: it reads `DOCKER_HOST` (unix, tcp, TLS with `DOCKER_CERT_PATH`, ssh) the way the
 * docker CLI does and hijacks the exec connection; the JSON calls and the stream framing are ours.
 *
 * @internal
 */
import { accessSync } from "node:fs"
import * as http from "node:http"
import * as https from "node:https"
import { homedir } from "node:os"
import { join } from "node:path"
import type * as Scope from "effect/Scope"
import * as Effect from "effect/Effect"
import type { Duplex, Readable } from "node:stream"
import type { ContainerEngine } from "../../../services/ContainerEngine.js"
import {
  ArchiveTooLargeError,
  ContainerConflictError,
  ContainerEngineError,
  ContainerNotFoundError,
  EngineUnavailableError
} from "../../../services/ContainerEngine.js"
import { execSession } from "./demux.js"
import type { EngineTls } from "./engineTls.js"
import { isTlsFailure, readEngineTls, tlsRequested } from "./engineTls.js"
import { groupAliveArgv, signalArgv } from "./wrapper.js"

/** Bound on one API call (not on an exec's stream) unless the caller sets one. */
const defaultRequestTimeoutMs = 30_000
/** Bound on the first ping, which decides whether the layer builds. */
const pingTimeoutMs = 5_000

type Modem = import("docker-modem")
type DialOptions = import("docker-modem").DialOptions

/**
 * The engine when nothing names one (no address, and `DOCKER_HOST` unset or a bare `unix://`): Docker
 * Desktop's per-user socket when there is one, else the system's, as the docker CLI and docker-modem
 * pick it. Passed to docker-modem explicitly, so the engine a message names is the one dialed.
 */
const defaultAddress = (): string => {
  const user = join(homedir(), ".docker", "run", "docker.sock")
  try {
    accessSync(user)
    return `unix://${user}`
  } catch {
    return "unix:///var/run/docker.sock"
  }
}

/**
 * docker-modem's constructor options for `address`, with `tls` on TCP. docker-modem lays them over
 * what it read from `DOCKER_HOST`, so a socket path also clears its host.
 */
const modemOptions = (address: string, tls: EngineTls | undefined): Record<string, unknown> => {
  const socket = (socketPath: string) => ({ socketPath, host: undefined, protocol: "http" })
  if (address.startsWith("unix://")) return socket(address.slice("unix://".length))
  if (address.startsWith("/")) return socket(address)
  const url = new URL(address.includes("//") ? address : `tcp://${address}`)
  if (url.protocol === "ssh:") {
    // Authenticated by the user's ssh-agent, as docker-modem does for an ssh `DOCKER_HOST`.
    return {
      protocol: "ssh",
      host: url.hostname,
      port: url.port || 22,
      username: url.username,
      sshOptions: { agent: process.env.SSH_AUTH_SOCK }
    }
  }
  const secure = tls !== undefined || url.protocol === "https:" || url.port === "2376"
  return { protocol: secure ? "https" : "http", host: url.hostname, port: url.port || (secure ? 2376 : 2375), ...tls }
}

/** Whether `address` reaches the engine over TCP (where TLS applies), not a socket or ssh. */
const overTcp = (address: string): boolean =>
  !address.startsWith("/") && !address.startsWith("unix://") && !address.startsWith("npipe://") && !address.startsWith("ssh://")

const errnoOf = (error: unknown): string | undefined =>
  typeof error === "object" && error !== null && typeof (error as { code?: unknown }).code === "string"
    ? (error as { code: string }).code
    : undefined

const statusOf = (error: unknown): number | undefined =>
  typeof error === "object" && error !== null && typeof (error as { statusCode?: unknown }).statusCode === "number"
    ? (error as { statusCode: number }).statusCode
    : undefined

/** The engine's own message (`No such image: x`) rather than docker-modem's wrapping of it. */
const engineMessage = (error: unknown): string => {
  const json = typeof error === "object" && error !== null ? (error as { json?: unknown }).json : undefined
  if (typeof json === "object" && json !== null && typeof (json as { message?: unknown }).message === "string") {
    return (json as { message: string }).message
  }
  if (Buffer.isBuffer(json)) return json.toString("utf8").trim()
  return error instanceof Error ? error.message : String(error)
}

const loadModem = Effect.tryPromise({
  try: () => import("docker-modem"),
  catch: (cause) =>
    new EngineUnavailableError({
      message: "the container executor needs the docker-modem package: npm install docker-modem@5 " +
        "(the command through npx: npx -y -p effect-bash -p docker-modem@5 effect-bash …)",
      cause
    })
})

/**
 * The engine at `address` (`unix:///path`, `tcp://host:port`, `ssh://user@host`), or at `DOCKER_HOST`
 * (else the default socket) when absent. Its connections close with the scope; each API call is bounded by `requestTimeoutMs`.
 */
export const makeDockerEngine = (
  address: string | undefined,
  requestTimeoutMs: number = defaultRequestTimeoutMs
): Effect.Effect<ContainerEngine.Service, ContainerEngine.Error, Scope.Scope> =>
  Effect.gen(function*() {
    const { default: Modem } = yield* loadModem
    const dockerHost = process.env.DOCKER_HOST
    const fromDockerHost = address === undefined && dockerHost !== undefined && dockerHost !== "unix://"
    const shown = fromDockerHost ? dockerHost : address ?? defaultAddress()
    // TLS as the docker CLI reads it, for a `DOCKER_HOST` and an explicit address alike.
    const tls = overTcp(shown) && tlsRequested() ? readEngineTls() : undefined
    if (typeof tls === "string") return yield* new EngineUnavailableError({ message: `cannot reach the Docker Engine at ${shown} over TLS: ${tls}` })
    const modem: Modem = yield* Effect.try({
      try: () => new Modem(modemOptions(shown, tls) as ConstructorParameters<typeof Modem>[0]),
      catch: (cause) => new EngineUnavailableError({ message: `bad Docker Engine address ${shown}: ${String(cause)}`, cause })
    })
    // Connections are kept alive between calls (an idle one for 5 s, as by Node's global agent) in an
    // agent of the engine's own, destroyed with its scope: the global agent would keep them open after
    // the layer has closed. (Over ssh, docker-modem brings its own agent.)
    const { protocol } = modem as unknown as { readonly protocol: "http" | "https" | "ssh" }
    if (protocol !== "ssh") {
      const options = { keepAlive: true, timeout: 5_000 }
      const agent = yield* Effect.acquireRelease(
        Effect.sync(() => protocol === "https" ? new https.Agent(options) : new http.Agent(options)),
        (agent) => Effect.sync(() => agent.destroy())
      )
      Object.assign(modem, { agent }) // read by docker-modem on each request
    }

    // The engine's status codes stop here: 404 is a box (or exec) not found, 409 a box that cannot do it now.
    const failure = (what: string, error: unknown): ContainerEngine.Error => {
      const code = errnoOf(error)
      const status = statusOf(error)
      // Over TLS 1.3 an engine that refuses the client's certificate may just close the connection.
      if (status === undefined && code !== undefined && (isTlsFailure(code) || (tls !== undefined && code === "ECONNRESET"))) {
        return new EngineUnavailableError({
          message: `the TLS connection to the Docker Engine at ${shown} failed (${code}: ${error instanceof Error ? error.message : String(error)}): ` +
            "check that DOCKER_CERT_PATH holds the CA that signed the engine's certificate (ca.pem) and a client certificate it accepts (cert.pem, key.pem)",
          cause: error
        })
      }
      if (status === undefined && code !== undefined) {
        return new EngineUnavailableError({
          message: `cannot reach the Docker Engine at ${shown} (${code}): is dockerd running? Set DOCKER_HOST or dockerHost to its address`,
          cause: error
        })
      }
      const said = engineMessage(error)
      // An engine started with `--tlsverify` answers a plain HTTP request so (Go's HTTPS server does).
      const hint = /HTTP request to an HTTPS server/.test(said)
        ? ": it speaks TLS; set DOCKER_TLS_VERIFY=1 and DOCKER_CERT_PATH to the directory with its CA (ca.pem) and a client certificate and key (cert.pem, key.pem)"
        : ""
      const message = `${what} failed on the Docker Engine at ${shown}: ${said}${hint}`
      return status === 404 ? new ContainerNotFoundError({ message, cause: error })
        : status === 409 ? new ContainerConflictError({ message, cause: error })
        : new ContainerEngineError({ message, cause: error })
    }

    const dial = (what: string, options: DialOptions, timeoutMs = requestTimeoutMs): Effect.Effect<unknown, ContainerEngine.Error> =>
      Effect.async<unknown, ContainerEngine.Error>((resume, signal) => {
        modem.dial({ ...options, abortSignal: signal }, (error, result) => {
          // A connection (a hijacked exec) that arrives after the wait gave up has no owner: it is closed.
          if (signal.aborted) return void (result as { destroy?: () => void } | null | undefined)?.destroy?.()
          resume(error === null ? Effect.succeed(result) : Effect.fail(failure(what, error)))
        })
      }).pipe(
        // The bound holds where the caller masks interruption (an acquire, a finalizer).
        Effect.interruptible,
        Effect.timeoutFail({
          duration: timeoutMs,
          onTimeout: () => new EngineUnavailableError({ message: `${what}: the Docker Engine at ${shown} did not answer within ${timeoutMs} ms` })
        })
      )

    const hijack = (execId: string, tty = false): Effect.Effect<Duplex, ContainerEngine.Error> =>
      Effect.map(
        dial("exec start", {
          path: `/exec/${execId}/start`,
          method: "POST",
          hijack: true,
          options: { Detach: false, Tty: tty },
          statusCodes: { 101: true, 200: true, 404: "no such exec", 409: "container is not running" }
        }),
        (socket) => socket as Duplex
      )

    /** The exec's exit code once its process has ended, as the engine recorded it. */
    const execExitCode = (execId: string) =>
      dial("exec inspect", { path: `/exec/${execId}/json`, method: "GET", statusCodes: { 200: true, 404: "no such exec" } }).pipe(
        Effect.map((info) => {
          const { ExitCode, Running } = info as { readonly Running?: boolean; readonly ExitCode?: number | null }
          return Running === true || typeof ExitCode !== "number" ? undefined : ExitCode
        })
      )

    /** Sets the size of a TTY exec's terminal. */
    const execResize = (execId: string) => (rows: number, cols: number) =>
      Effect.asVoid(dial("exec resize", {
        path: `/exec/${execId}/resize?`,
        method: "POST",
        options: { _query: { h: rows, w: cols }, _body: {} },
        statusCodes: { 200: true, 201: true, 400: "bad parameter", 404: "no such exec", 409: "exec is not running" }
      }))

    /**
     * The whole body of a streamed answer, bounded in time as a request is and in size by `maxBytes`:
     * past it the body is dropped, unread.
     */
    const readBody = (what: string, body: Readable, maxBytes: number) =>
      Effect.tryPromise({
        try: async () => {
          const chunks: Array<Buffer> = []
          let length = 0
          for await (const chunk of body) {
            length += (chunk as Buffer).length
            if (length > maxBytes) {
              body.destroy()
              return undefined
            }
            chunks.push(chunk as Buffer)
          }
          return new Uint8Array(Buffer.concat(chunks))
        },
        catch: (cause) => failure(what, cause)
      }).pipe(
        Effect.onInterrupt(() => Effect.sync(() => body.destroy())),
        Effect.timeoutFail({
          duration: requestTimeoutMs,
          onTimeout: () => new EngineUnavailableError({ message: `${what}: the Docker Engine at ${shown} did not answer within ${requestTimeoutMs} ms` })
        }),
        Effect.flatMap((bytes) =>
          bytes === undefined
            ? Effect.fail(new ArchiveTooLargeError({ message: `${what}: the archive is larger than ${maxBytes} bytes`, maxBytes }))
            : Effect.succeed(bytes)
        )
      )

    const exec: ContainerEngine.Service["exec"] = (box, options) =>
      Effect.gen(function*() {
        const created = (yield* dial("exec create", {
          path: `/containers/${box}/exec`,
          method: "POST",
          options: {
            AttachStdin: options.stdin,
            AttachStdout: true,
            AttachStderr: true,
            Tty: options.tty === true,
            Cmd: options.argv,
            Env: Object.entries(options.env).map(([name, value]) => `${name}=${value}`),
            ...(options.user === undefined ? {} : { User: options.user })
          },
          statusCodes: { 201: true, 404: "no such container", 409: "container is not running" }
        })) as { readonly Id: string }
        const tty = options.tty === true
        const session = execSession(yield* hijack(created.Id, tty), tty)
        return { ...session, exitCode: execExitCode(created.Id), ...(tty ? { resize: execResize(created.Id) } : {}) }
      })

    const run: ContainerEngine.Service["run"] = (box, argv, user) =>
      Effect.acquireUseRelease(
        exec(box, { argv, env: {}, user, stdin: false }),
        (started) =>
          Effect.gen(function*() {
            let output = ""
            for (let frame = yield* started.next; frame !== undefined; frame = yield* started.next) {
              if (frame.stream === "stdout") output += Buffer.from(frame.bytes).toString("utf8")
            }
            return output
          }).pipe(
            // The bound holds where the caller masks interruption (a kill in a finalizer).
            Effect.interruptible,
            Effect.timeoutFail({
              duration: requestTimeoutMs,
              onTimeout: () => new EngineUnavailableError({ message: `exec in ${box.slice(0, 12)} did not end within ${requestTimeoutMs} ms` })
            })
          ),
        (started) => started.close
      )

    const gone = (error: ContainerEngine.Error) => error._tag === "ContainerNotFound" || error._tag === "ContainerConflict"

    /** The box's state as the engine reports it; `undefined` when there is no such box. */
    const stateOf = (box: string) =>
      dial("container inspect", {
        path: `/containers/${box}/json`,
        method: "GET",
        statusCodes: { 200: true, 404: "no such container" }
      }).pipe(
        Effect.map((info) => (info as { readonly State?: { readonly Running?: boolean; readonly Paused?: boolean } }).State ?? {}),
        Effect.catchTag("ContainerNotFound", () => Effect.succeed(undefined))
      )

    /** Whether `box` is paused: the engine refuses it every exec (409), as it does a box that is gone. */
    const paused = (box: string) =>
      stateOf(box).pipe(Effect.map((state) => state?.Paused === true), Effect.orElseSucceed(() => false))

    const engine: ContainerEngine.Service = {
      address: shown,
      ping: Effect.asVoid(dial("ping", { path: "/_ping", method: "GET", statusCodes: { 200: true } }, Math.min(pingTimeoutMs, requestTimeoutMs))),
      cpuCount: Effect.map(
        dial("info", { path: "/info", method: "GET", statusCodes: { 200: true } }),
        (info) => (info as { readonly NCPU?: number }).NCPU ?? Number.POSITIVE_INFINITY
      ),
      hasImage: (image) =>
        dial("image inspect", {
          path: `/images/${encodeURIComponent(image)}/json`,
          method: "GET",
          statusCodes: { 200: true, 404: "no such image" }
        }).pipe(
          Effect.as(true),
          Effect.catchTag("ContainerNotFound", () => Effect.succeed(false))
        ),
      createBox: (options) =>
        Effect.gen(function*() {
          const created = (yield* dial("container create", {
            path: "/containers/create",
            method: "POST",
            options: {
              Image: options.image,
              Cmd: ["sleep", "infinity"],
              Entrypoint: [],
              Env: Object.entries(options.env ?? {}).map(([name, value]) => `${name}=${value}`),
              Labels: options.labels,
              User: options.user,
              HostConfig: {
                Init: true,
                // No device nodes (the box could make one in a mounted workspace, which the host's
                // users open), and with `dropCapabilities` no capability at all: no chown, no setuid.
                CapDrop: options.dropCapabilities ? ["ALL"] : ["MKNOD"],
                SecurityOpt: ["no-new-privileges", `seccomp=${options.seccompProfile}`],
                NetworkMode: options.network,
                // Not `Binds`: a bind mount refuses a missing source instead of creating it on the host.
                Mounts: [
                  ...options.mounts.map(({ host, readOnly, target }) => ({ Type: "bind", Source: host, Target: target, ReadOnly: readOnly === true })),
                  // Anonymous ones carry the box's labels and go with it (`v` on its removal); a named one stays.
                  ...(options.volumes ?? []).map(({ name, target }) =>
                    name === undefined
                      ? { Type: "volume", Target: target, VolumeOptions: { Labels: options.labels } }
                      : { Type: "volume", Source: name, Target: target }
                  )
                ],
                ReadonlyRootfs: options.readOnlyRootfs,
                Tmpfs: {
                  ...(options.readOnlyRootfs ? { "/tmp": "rw,nosuid,nodev,mode=1777" } : {}),
                  [options.supervisorDir.path]: `rw,exec,nosuid,nodev,size=16m,mode=0711,uid=${options.supervisorDir.uid},gid=${options.supervisorDir.uid}`
                },
                ...(options.memoryMb === undefined
                  ? {}
                  : { Memory: options.memoryMb * 1024 * 1024, MemorySwap: options.memoryMb * 1024 * 1024 }),
                ...(options.pidsLimit === undefined ? {} : { PidsLimit: options.pidsLimit }),
                ...(options.cpus === undefined ? {} : { NanoCpus: Math.round(options.cpus * 1e9) })
              }
            },
            statusCodes: { 201: true, 400: "bad parameter", 404: "no such image", 409: "conflict" }
          })) as { readonly Id: string }
          yield* dial("container start", {
            path: `/containers/${created.Id}/start`,
            method: "POST",
            statusCodes: { 204: true, 304: true, 404: "no such container" }
          }).pipe(Effect.onError(() => Effect.ignore(engine.removeBox(created.Id))))
          return created.Id
        }),
      exec,
      run,
      // A box that is gone has nothing left to signal; a paused one cannot be signalled, and its
      // frozen members still count as alive.
      signalGroup: (box, pgid, signal) =>
        run(box, signalArgv(pgid, signal)).pipe(
          Effect.map((output) => output === "sent"),
          Effect.catchIf(gone, (error) => error._tag === "ContainerConflict" ? Effect.map(paused(box), (frozen) => !frozen) : Effect.succeed(true))
        ),
      groupAlive: (box, pgid) =>
        run(box, groupAliveArgv(pgid)).pipe(
          Effect.map((output) => output.trim() !== "empty"),
          Effect.catchIf(gone, (error) => error._tag === "ContainerConflict" ? paused(box) : Effect.succeed(false))
        ),
      boxPaused: paused,
      boxRunning: (box) => Effect.map(stateOf(box), (state) => state?.Running === true),
      stopBox: (box) =>
        Effect.asVoid(dial("container stop", {
          path: `/containers/${box}/stop?`,
          method: "POST",
          options: { _query: { t: 0 }, _body: {} },
          statusCodes: { 204: true, 304: true, 404: "no such container" }
        })),
      startBox: (box) =>
        Effect.asVoid(dial("container start", {
          path: `/containers/${box}/start`,
          method: "POST",
          statusCodes: { 204: true, 304: true, 404: "no such container" }
        })),
      removeBox: (box) =>
        dial("container remove", {
          path: `/containers/${box}?`,
          method: "DELETE",
          options: { force: true, v: true },
          statusCodes: { 204: true, 404: "no such container", 409: "removal in progress" }
        }).pipe(Effect.asVoid, Effect.catchIf(gone, () => Effect.void)),
      listBoxes: (labels) =>
        dial("container list", {
          path: "/containers/json?",
          method: "GET",
          options: { all: true, filters: { label: Object.entries(labels).map(([name, value]) => `${name}=${value}`) } },
          statusCodes: { 200: true }
        }).pipe(
          Effect.map((list) =>
            (list as ReadonlyArray<{ readonly Id: string; readonly Labels?: Record<string, string>; readonly Created?: number }>).map((
              entry
            ) => ({
              id: entry.Id,
              labels: entry.Labels ?? {},
              createdMillis: (entry.Created ?? 0) * 1000
            }))
          )
        ),
      listVolumes: (labels) =>
        dial("volume list", {
          path: "/volumes?",
          method: "GET",
          options: { filters: { label: Object.entries(labels).map(([name, value]) => `${name}=${value}`) } },
          statusCodes: { 200: true }
        }).pipe(
          Effect.map((list) =>
            ((list as { readonly Volumes?: ReadonlyArray<{ readonly Name: string; readonly Labels?: Record<string, string> | null }> | null })
              .Volumes ?? []).map((volume) => ({ name: volume.Name, labels: volume.Labels ?? {} }))
          )
        ),
      removeVolume: (name) =>
        dial("volume remove", {
          path: `/volumes/${encodeURIComponent(name)}`,
          method: "DELETE",
          statusCodes: { 204: true, 404: "no such volume", 409: "volume in use" }
        }).pipe(Effect.asVoid, Effect.catchTag("ContainerNotFound", () => Effect.void)),
      putArchive: (box, path, tar) =>
        Effect.asVoid(dial("archive upload", {
          path: `/containers/${box}/archive?`,
          method: "PUT",
          file: Buffer.from(tar.buffer, tar.byteOffset, tar.byteLength),
          options: { path },
          statusCodes: { 200: true, 400: "bad parameter", 403: "read-only", 404: "no such container or path" }
        })),
      getArchive: (box, path, maxBytes) =>
        dial("archive download", {
          path: `/containers/${box}/archive?`,
          method: "GET",
          isStream: true,
          options: { path },
          statusCodes: { 200: true, 400: "bad parameter", 404: "no such container or path" }
        }).pipe(Effect.flatMap((body) => readBody(`archive download of ${path}`, body as Readable, maxBytes)))
    }
    return engine
  })
