/**
 * The proxies of one sandboxed call: an HTTP proxy (CONNECT tunnels, and plain requests by absolute
 * URI) and a SOCKS5 server (CONNECT, no authentication), both on Node's `net`/`http` and listening on
 * unix sockets that the sandbox's bridge reaches. Each connection is admitted by {@link admit}; each
 * refusal is recorded for the call's result. Open connections are bounded across every call of a
 * layer; a handshake that stalls is cut; closing the call's scope closes the servers and every
 * connection they opened.
 *
 * @internal
 */
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import * as NodeHttp from "node:http"
import * as NodeNet from "node:net"
import type { Entry, Policy } from "./allowList.js"
import { deniedAddresses, normalHost } from "./allowList.js"
import type { Resolver } from "./admission.js"
import { admit, reasons, refusalLine } from "./admission.js"

/** What a layer's proxies share. */
export interface ProxyOptions {
  readonly policy: Policy
  readonly resolve: Resolver
  /** Open upstream connections, across every call of the layer. */
  readonly maxConnections: number
  /** Bound on a client's handshake and on an upstream connect. */
  readonly handshakeTimeoutMs: number
}

/** Client connections a call's server accepts beyond the bound on tunnels, each to be refused by name. */
const handshakeRoom = 16

/** The most refusal lines one call reports; more are counted in one last line. */
const maxRefusalLines = 20

/** A call's proxies could not listen on their sockets. */
export class NetworkProxyError extends Data.TaggedError("NetworkProxyError")<{
  readonly message: string
}> {}

/** An upstream connection, or why there is none: a policy refusal (reported) or a failed connect. */
type Upstream =
  | { readonly _tag: "Open"; readonly socket: NodeNet.Socket }
  | { readonly _tag: "Refused"; readonly refusal: string }
  | { readonly _tag: "Failed" }

/** A layer's proxy state: the bound on connections shared by its calls. */
export interface NetworkProxy {
  /**
   * Starts a call's proxies on `httpPath` and `socksPath`, closed with the scope; `extraAllow` is
   * what this call may reach besides the policy's allow-list (read at each connection when a
   * function: a container's proxies serve a session's calls as they come and go), and `onRefusal`
   * hears each refusal as it happens.
   */
  readonly open: (
    httpPath: string,
    socksPath: string,
    extraAllow?: ReadonlyArray<Entry> | (() => ReadonlyArray<Entry>),
    onRefusal?: (refusal: string) => void
  ) => Effect.Effect<CallProxy, NetworkProxyError, Scope.Scope>
}

/** One call's proxies. */
export interface CallProxy {
  /** The refusals so far, as the model reads them, each once. */
  readonly refusals: () => ReadonlyArray<string>
}

/** The refusals one call has seen, as the model reads them: each once, at most {@link maxRefusalLines}, the rest counted. */
export interface RefusalLog {
  readonly add: (refusal: string) => void
  readonly lines: () => ReadonlyArray<string>
}

/** An empty {@link RefusalLog}. */
export const makeRefusalLog = (): RefusalLog => {
  const refused = new Set<string>()
  let overflow = 0
  return {
    add: (refusal) => {
      if (refused.has(refusal)) return
      if (refused.size < maxRefusalLines) refused.add(refusal)
      else overflow++
    },
    lines: () => [
      ...[...refused].map(refusalLine),
      ...(overflow > 0 ? [`[network: refused ${overflow} more connections]`] : [])
    ]
  }
}

/** A layer's proxies under `options`. */
export const makeNetworkProxy = (options: ProxyOptions): NetworkProxy => {
  const denied = deniedAddresses()
  let upstreams = 0
  return {
    open: (httpPath, socksPath, extraAllow = [], onRefusal) => {
      const policyNow = (): Policy => {
        const extra = typeof extraAllow === "function" ? extraAllow() : extraAllow
        return extra.length === 0 ? options.policy : { ...options.policy, allow: [...options.policy.allow, ...extra] }
      }
      const log = makeRefusalLog()
      const sockets = new Set<NodeNet.Socket>()
      // Set as the call's scope closes: an admission still resolving then opens nothing.
      let closed = false
      const track = (socket: NodeNet.Socket) => {
        if (closed) return void socket.destroy()
        sockets.add(socket)
        socket.on("close", () => sockets.delete(socket))
        socket.on("error", () => socket.destroy())
      }
      const refuse = (refusal: string) => {
        onRefusal?.(refusal)
        log.add(refusal)
      }
      /** The upstream socket for `host:port`, or the refusal. */
      const connect = async (host: string, port: number): Promise<Upstream> => {
        const admission = await admit(policyNow(), denied, options.resolve, host, port)
        if (closed) return { _tag: "Failed" }
        if (admission._tag === "Refused") {
          refuse(admission.refusal)
          return admission
        }
        if (upstreams >= options.maxConnections) {
          const refusal = `${normalHost(host)}:${port} — ${reasons.busy}`
          refuse(refusal)
          return { _tag: "Refused", refusal }
        }
        upstreams++
        const upstream = NodeNet.connect({ host: admission.address, port })
        upstream.once("close", () => upstreams--)
        track(upstream)
        upstream.setTimeout(options.handshakeTimeoutMs, () => upstream.destroy())
        return new Promise((resolve) => {
          upstream.once("connect", () => {
            upstream.setTimeout(0)
            resolve({ _tag: "Open", socket: upstream })
          })
          upstream.once("close", () => resolve({ _tag: "Failed" }))
        })
      }
      const splice = (client: NodeNet.Socket, upstream: NodeNet.Socket, head?: Uint8Array) => {
        client.setTimeout(0)
        if (head !== undefined && head.length > 0) upstream.write(head)
        client.pipe(upstream)
        upstream.pipe(client)
        client.once("close", () => upstream.destroy())
        upstream.once("close", () => client.destroy())
      }

      const http = NodeHttp.createServer({ headersTimeout: options.handshakeTimeoutMs, requestTimeout: 0 })
      http.on("connection", (socket: NodeNet.Socket) => {
        track(socket)
        socket.setTimeout(options.handshakeTimeoutMs, () => socket.destroy())
      })
      http.on("connect", (request: NodeHttp.IncomingMessage, client: NodeNet.Socket, head: Buffer) => {
        const target = /^(\[[^\]]+\]|[^:]+):(\d{1,5})$/.exec(request.url ?? "")
        if (target === null) return void client.end("HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n")
        void connect(target[1]!, Number(target[2])).then((upstream) => {
          if (upstream._tag === "Refused") return forbidden(client, upstream.refusal)
          if (upstream._tag === "Failed") return void client.end("HTTP/1.1 502 Bad Gateway\r\nConnection: close\r\n\r\n")
          client.write("HTTP/1.1 200 Connection Established\r\n\r\n")
          splice(client, upstream.socket, head)
        })
      })
      http.on("request", (request: NodeHttp.IncomingMessage, response: NodeHttp.ServerResponse) => {
        let url: URL
        try {
          url = new URL(request.url ?? "")
        } catch {
          return void response.writeHead(400, { connection: "close" }).end()
        }
        if (url.protocol !== "http:") return void response.writeHead(400, { connection: "close" }).end()
        const port = url.port === "" ? 80 : Number(url.port)
        void connect(url.hostname, port).then((upstream) => {
          if (upstream._tag === "Refused") {
            return void response.writeHead(403, { "content-type": "text/plain", connection: "close" })
              .end(`${refusalLine(upstream.refusal)}\n`)
          }
          if (upstream._tag === "Failed") return void response.writeHead(502, { connection: "close" }).end()
          // Admitted: the upstream may take its time to answer, as through a tunnel.
          request.socket.setTimeout(0)
          const headers = Object.fromEntries(
            Object.entries(request.headers).filter(([name]) => !/^proxy-|^connection$|^keep-alive$/i.test(name))
          )
          const forwarded = NodeHttp.request({
            createConnection: () => upstream.socket,
            method: request.method,
            path: `${url.pathname}${url.search}`,
            // The admitted name, not one the client wrote in `Host`: no fronting another site at that address.
            headers: { ...headers, host: url.host, connection: "close" },
            setHost: false
          })
          forwarded.on("response", (answer) => {
            response.writeHead(answer.statusCode ?? 502, answer.headers)
            answer.pipe(response)
          })
          forwarded.on("error", () => response.headersSent ? response.destroy() : response.writeHead(502).end())
          request.pipe(forwarded)
        })
      })

      const socks = NodeNet.createServer((client) => {
        track(client)
        client.setTimeout(options.handshakeTimeoutMs, () => client.destroy())
        socksHandshake(client, (host, port) =>
          connect(host, port).then((upstream) => {
            // 0x02: connection not allowed by ruleset; 0x05: connection refused.
            if (upstream._tag !== "Open") {
              return void client.end(Uint8Array.of(5, upstream._tag === "Refused" ? 2 : 5, 0, 1, 0, 0, 0, 0, 0, 0))
            }
            client.write(Uint8Array.of(5, 0, 0, 1, 0, 0, 0, 0, 0, 0))
            splice(client, upstream.socket)
          }))
      })
      // Client connections: the tunnels the bound allows, plus room for handshakes, which the bound
      // then refuses by name; past that the server drops them unread.
      http.maxConnections = options.maxConnections + handshakeRoom
      socks.maxConnections = options.maxConnections + handshakeRoom

      const listen = (server: NodeNet.Server, path: string) =>
        Effect.async<void, NetworkProxyError>((resume) => {
          server.once("error", (error) =>
            resume(Effect.fail(
              new NetworkProxyError({ message: `the network proxy cannot listen on ${path}: ${error.message}` })
            )))
          server.listen(path, () => resume(Effect.void))
        })
      const close = (server: NodeNet.Server) =>
        Effect.async<void>((resume) => {
          server.close(() => resume(Effect.void))
        })
      // Every connection is destroyed first, so the servers close at once; the bound is for safety.
      const release = Effect.suspend(() => {
        closed = true
        for (const socket of sockets) socket.destroy()
        return Effect.all([close(http), close(socks)], { concurrency: 2, discard: true }).pipe(
          Effect.interruptible,
          Effect.timeoutOption(options.handshakeTimeoutMs),
          Effect.asVoid
        )
      })
      return Effect.acquireRelease(
        Effect.zipRight(listen(http, httpPath), listen(socks, socksPath)).pipe(
          Effect.onError(() => release)
        ),
        () => release
      ).pipe(
        Effect.withSpan("SandboxNetwork.open"),
        Effect.as({ refusals: log.lines })
      )
    }
  }
}

const forbidden = (client: NodeNet.Socket, refusal: string) => {
  const body = `${refusalLine(refusal)}\n`
  client.end(
    `HTTP/1.1 403 Forbidden\r\nContent-Type: text/plain\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
      `Connection: close\r\n\r\n${body}`
  )
}

/**
 * Reads a SOCKS5 greeting and CONNECT request from `client` (RFC 1928, no authentication), then
 * hands the requested host and port to `onConnect`; anything else is answered with its error and
 * closed.
 */
const socksHandshake = (client: NodeNet.Socket, onConnect: (host: string, port: number) => Promise<void>) => {
  let buffered = Buffer.alloc(0)
  let greeted = false
  const onData = (chunk: Buffer) => {
    buffered = Buffer.concat([buffered, chunk])
    if (buffered.length > 512) return void client.destroy()
    if (!greeted) {
      if (buffered.length < 2) return
      if (buffered[0] !== 5) return void client.destroy()
      const methods = buffered.subarray(2, 2 + buffered[1]!)
      if (methods.length < buffered[1]!) return
      buffered = buffered.subarray(2 + buffered[1]!)
      greeted = true
      if (!methods.includes(0)) return void client.end(Uint8Array.of(5, 0xff))
      client.write(Uint8Array.of(5, 0))
    }
    if (buffered.length < 5) return
    const [version, command, , type] = buffered
    let host: string
    let end: number
    if (type === 1) {
      end = 4 + 4
      if (buffered.length < end + 2) return
      host = [...buffered.subarray(4, end)].join(".")
    } else if (type === 3) {
      end = 5 + buffered[4]!
      if (buffered.length < end + 2) return
      host = buffered.subarray(5, end).toString("latin1")
    } else if (type === 4) {
      end = 4 + 16
      if (buffered.length < end + 2) return
      const words = [...Array(8).keys()].map((index) => buffered.readUInt16BE(4 + index * 2).toString(16))
      host = words.join(":")
    } else {
      // 0x08: address type not supported.
      return void client.end(Uint8Array.of(5, 8, 0, 1, 0, 0, 0, 0, 0, 0))
    }
    if (version !== 5 || command !== 1) {
      // 0x07: command not supported (BIND and UDP ASSOCIATE are not offered).
      return void client.end(Uint8Array.of(5, 7, 0, 1, 0, 0, 0, 0, 0, 0))
    }
    client.off("data", onData)
    client.pause()
    const rest = buffered.subarray(end + 2)
    if (rest.length > 0) client.unshift(rest)
    void onConnect(host, buffered.readUInt16BE(end))
  }
  client.on("data", onData)
}
