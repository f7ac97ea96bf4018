/**
 * A call's network proxies on their own, over real sockets (no processes): the resolver is injected,
 * so a name can resolve to a denied address; a flood is bounded; closing the scope closes everything.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Exit, Scope } from "effect"
import * as fs from "node:fs"
import * as net from "node:net"
import * as os from "node:os"
import * as path from "node:path"
import type { Policy } from "../../src/layers/internal/network/allowList.js"
import { parseEntry } from "../../src/layers/internal/network/allowList.js"
import { makeNetworkProxy } from "../../src/layers/internal/network/proxy.js"

const entries = (...texts: ReadonlyArray<string>) => texts.map((text) => parseEntry(text) as Exclude<ReturnType<typeof parseEntry>, string>)

const policy = (allow: ReadonlyArray<string>): Policy => ({ allow: entries(...allow), deny: [], denyReasons: {}, hosts: new Map() })

/** A TCP server on loopback that holds every connection open, and the sockets it holds. */
const holdingServer = Effect.acquireRelease(
  Effect.async<{ readonly server: net.Server; readonly held: Set<net.Socket> }>((resume) => {
    const held = new Set<net.Socket>()
    const server = net.createServer((socket) => {
      held.add(socket)
      socket.on("close", () => held.delete(socket))
      socket.on("error", () => undefined)
    })
    server.listen(0, "127.0.0.1", () => resume(Effect.succeed({ server, held })))
  }),
  ({ held, server }) =>
    Effect.async<void>((resume) => {
      for (const socket of held) socket.destroy()
      server.close(() => resume(Effect.void))
    })
)

/** Sends an HTTP CONNECT for `target` to the proxy at `socketPath`; the status line, and the socket. */
const connectThrough = (socketPath: string, target: string) =>
  Effect.async<{ readonly status: string; readonly body: string; readonly socket: net.Socket }, Error>((resume) => {
    const socket = net.connect(socketPath)
    let text = ""
    socket.on("error", (error) => resume(Effect.fail(error)))
    socket.on("connect", () => socket.write(`CONNECT ${target} HTTP/1.1\r\nHost: ${target}\r\n\r\n`))
    socket.on("data", (chunk) => {
      text += chunk.toString()
      const end = text.indexOf("\r\n\r\n")
      if (end < 0) return
      const status = text.slice(0, text.indexOf("\r\n"))
      if (status.includes(" 200 ")) return resume(Effect.succeed({ status, body: "", socket }))
      socket.on("end", () => resume(Effect.succeed({ status, body: text.slice(end + 4), socket })))
    })
  })

const socketDir = () => fs.mkdtempSync(path.join(os.tmpdir(), "effect-bash-proxy-test-"))

describe("the network proxies", () => {
  it.live("a name the resolver maps to a denied address is refused, with its line; an allowed IP literal passes", () =>
    Effect.gen(function*() {
      const { server } = yield* holdingServer
      const port = (server.address() as net.AddressInfo).port
      const dir = socketDir()
      yield* Effect.addFinalizer(() => Effect.sync(() => fs.rmSync(dir, { recursive: true, force: true })))
      const resolved: Record<string, string> = { "inside.test": "127.0.0.1", "metadata.test": "169.254.169.254", "lan.test": "192.168.1.10" }
      const proxy = makeNetworkProxy({
        policy: policy(["inside.test", "metadata.test", "lan.test", "127.0.0.1"]),
        resolve: (name) => resolved[name] === undefined ? Promise.reject(new Error("no")) : Promise.resolve(resolved[name]),
        maxConnections: 8,
        handshakeTimeoutMs: 5_000
      })
      const call = yield* proxy.open(path.join(dir, "http.sock"), path.join(dir, "socks.sock"))
      for (const name of ["inside.test", "metadata.test", "lan.test"]) {
        const refused = yield* connectThrough(path.join(dir, "http.sock"), `${name}:${port}`)
        expect(refused.status).toBe("HTTP/1.1 403 Forbidden")
        expect(refused.body).toBe(`[network: refused ${name}:${port} — resolves to a denied address]\n`)
      }
      const literal = yield* connectThrough(path.join(dir, "http.sock"), `127.0.0.1:${port}`)
      expect(literal.status).toBe("HTTP/1.1 200 Connection Established")
      literal.socket.destroy()
      expect(call.refusals()).toEqual([
        `[network: refused inside.test:${port} — resolves to a denied address]`,
        `[network: refused metadata.test:${port} — resolves to a denied address]`,
        `[network: refused lan.test:${port} — resolves to a denied address]`
      ])
    }).pipe(Effect.scoped))

  it.live("open connections are bounded across calls; closing a call's scope closes its servers and tunnels", () =>
    Effect.gen(function*() {
      const { held, server } = yield* holdingServer
      const port = (server.address() as net.AddressInfo).port
      const dir = socketDir()
      yield* Effect.addFinalizer(() => Effect.sync(() => fs.rmSync(dir, { recursive: true, force: true })))
      const proxy = makeNetworkProxy({ policy: policy(["127.0.0.1"]), resolve: () => Promise.reject(new Error("unused")), maxConnections: 3, handshakeTimeoutMs: 5_000 })
      const first = yield* Scope.make()
      const second = yield* Scope.make()
      const firstCall = yield* proxy.open(path.join(dir, "a-http.sock"), path.join(dir, "a-socks.sock")).pipe(Scope.extend(first))
      const secondCall = yield* proxy.open(path.join(dir, "b-http.sock"), path.join(dir, "b-socks.sock")).pipe(Scope.extend(second))
      const tunnels = yield* Effect.all([
        connectThrough(path.join(dir, "a-http.sock"), `127.0.0.1:${port}`),
        connectThrough(path.join(dir, "a-http.sock"), `127.0.0.1:${port}`),
        connectThrough(path.join(dir, "b-http.sock"), `127.0.0.1:${port}`)
      ])
      expect(tunnels.map((tunnel) => tunnel.status)).toEqual(Array(3).fill("HTTP/1.1 200 Connection Established"))
      const flood = yield* Effect.all(
        Array.from({ length: 10 }, () => connectThrough(path.join(dir, "b-http.sock"), `127.0.0.1:${port}`)),
        { concurrency: "unbounded" }
      )
      expect(new Set(flood.map((answer) => answer.body))).toEqual(
        new Set([`[network: refused 127.0.0.1:${port} — too many open connections]\n`])
      )
      expect(secondCall.refusals()).toEqual([`[network: refused 127.0.0.1:${port} — too many open connections]`])
      expect(firstCall.refusals()).toEqual([])
      expect(held.size).toBe(3)

      yield* Scope.close(first, Exit.void)
      const closed = yield* Effect.either(connectThrough(path.join(dir, "a-http.sock"), `127.0.0.1:${port}`))
      expect(closed._tag).toBe("Left")
      expect(fs.existsSync(path.join(dir, "a-http.sock"))).toBe(false)
      // The first call's two tunnels are gone, so the second call may open one more.
      yield* Effect.promise(() => Promise.all(tunnels.slice(0, 2).map((tunnel) => new Promise((resolve) => tunnel.socket.closed ? resolve(undefined) : tunnel.socket.once("close", resolve)))))
      const again = yield* connectThrough(path.join(dir, "b-http.sock"), `127.0.0.1:${port}`)
      expect(again.status).toBe("HTTP/1.1 200 Connection Established")
      yield* Scope.close(second, Exit.void)
      for (const tunnel of [...tunnels, again]) {
        yield* Effect.promise(() => new Promise((resolve) => tunnel.socket.closed ? resolve(undefined) : tunnel.socket.once("close", resolve)))
      }
      expect(fs.readdirSync(dir)).toEqual([])
    }).pipe(Effect.scoped))

  it.live("a stalled handshake is cut after its bound", () =>
    Effect.gen(function*() {
      const dir = socketDir()
      yield* Effect.addFinalizer(() => Effect.sync(() => fs.rmSync(dir, { recursive: true, force: true })))
      const proxy = makeNetworkProxy({ policy: policy(["127.0.0.1"]), resolve: () => Promise.reject(new Error("unused")), maxConnections: 3, handshakeTimeoutMs: 200 })
      yield* proxy.open(path.join(dir, "http.sock"), path.join(dir, "socks.sock"))
      for (const file of ["http.sock", "socks.sock"]) {
        const ended = yield* Effect.async<string>((resume) => {
          const socket = net.connect(path.join(dir, file))
          socket.on("connect", () => socket.write(file === "http.sock" ? "CONNECT 127.0.0.1:1 HTTP/1.1\r\n" : Uint8Array.of(5)))
          socket.on("error", () => undefined)
          socket.on("close", () => resume(Effect.succeed("closed")))
        })
        expect(ended).toBe("closed")
      }
    }).pipe(Effect.scoped))
})
