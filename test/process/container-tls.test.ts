/**
 * The engine over TLS when DOCKER_TLS_VERIFY and DOCKER_CERT_PATH are set, as the docker CLI reads
 * them. The engine is the local one behind a TLS-terminating proxy on loopback TCP that requires a
 * client certificate signed by its CA (as `dockerd --tlsverify` does) and answers a plain HTTP
 * request as dockerd's HTTPS server does; the certificates are made here with `openssl`.
 */
import { afterAll, describe, expect, it } from "@effect/vitest"
import { Context, Effect, Layer } from "effect"
import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as net from "node:net"
import * as path from "node:path"
import * as tls from "node:tls"
import * as DockerBashExecutor from "../../src/layers/DockerBashExecutor.js"
import { BashExecutor } from "../../src/services/BashExecutor.js"
import { dockerUnavailable, testImage } from "../support/docker.js"
import { tempDirs } from "../support/tempDirs.js"

const dirs = tempDirs("effect-bash-tls")
afterAll(dirs.removeAll)

const openssl = (...args: ReadonlyArray<string>) => execFileSync("openssl", args, { stdio: ["ignore", "pipe", "pipe"] })

/** A CA, and a certificate it signed for `name` in `dir` (`cert.pem`, `key.pem`) with `extension`. */
const signed = (dir: string, ca: string, name: string, extension: string) => {
  fs.mkdirSync(dir, { recursive: true })
  const ext = path.join(dir, "ext.cnf")
  fs.writeFileSync(ext, `${extension}\n`)
  openssl("req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-keyout", path.join(dir, "key.pem"),
    "-out", path.join(dir, "req.csr"), "-subj", `/CN=${name}`)
  openssl("x509", "-req", "-in", path.join(dir, "req.csr"), "-CA", path.join(ca, "ca.pem"), "-CAkey", path.join(ca, "ca-key.pem"),
    "-CAcreateserial", "-out", path.join(dir, "cert.pem"), "-days", "1", "-extfile", ext)
  fs.copyFileSync(path.join(ca, "ca.pem"), path.join(dir, "ca.pem"))
}

const authority = (dir: string, name: string) => {
  fs.mkdirSync(dir, { recursive: true })
  openssl("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-keyout", path.join(dir, "ca-key.pem"),
    "-out", path.join(dir, "ca.pem"), "-days", "1", "-subj", `/CN=${name}`)
  return dir
}

/**
 * A TLS endpoint on 127.0.0.1 in front of the local engine's socket: a client must present a
 * certificate `ca` signed; a plain HTTP request gets dockerd's answer to one.
 */
const tlsProxy = async (server: string) => {
  const upstream = (secure: net.Socket) => {
    const engine = net.connect({ path: "/var/run/docker.sock", allowHalfOpen: true })
    secure.pipe(engine)
    engine.pipe(secure)
    secure.on("error", () => engine.destroy())
    engine.on("error", () => secure.destroy())
  }
  const secured = tls.createServer({
    ca: fs.readFileSync(path.join(server, "ca.pem")),
    cert: fs.readFileSync(path.join(server, "cert.pem")),
    key: fs.readFileSync(path.join(server, "key.pem")),
    requestCert: true,
    rejectUnauthorized: true,
    allowHalfOpen: true
  }, upstream)
  const clientErrors: Array<string> = []
  secured.on("tlsClientError", (error) => clientErrors.push(error.message))
  const outer = net.createServer({ allowHalfOpen: true }, (socket) => {
    socket.on("error", () => socket.destroy())
    socket.once("data", (first) => {
      socket.pause()
      socket.unshift(first)
      // A TLS handshake starts with a record of type 22; anything else is plain HTTP.
      if (first[0] === 0x16) secured.emit("connection", socket)
      else socket.resume().end("HTTP/1.0 400 Bad Request\r\n\r\nClient sent an HTTP request to an HTTPS server.\n")
    })
  })
  await new Promise<void>((resolve) => outer.listen(0, "127.0.0.1", resolve))
  return {
    address: `tcp://127.0.0.1:${(outer.address() as net.AddressInfo).port}`,
    clientErrors,
    close: () => new Promise<void>((resolve) => outer.close(() => resolve()))
  }
}

/** Runs `body` with the docker CLI's TLS variables set as `env` says, then puts them back. */
const withTlsEnv = <A, E>(env: { readonly DOCKER_TLS_VERIFY?: string; readonly DOCKER_CERT_PATH?: string }, body: Effect.Effect<A, E>) =>
  Effect.acquireUseRelease(
    Effect.sync(() => {
      const saved = { DOCKER_TLS_VERIFY: process.env.DOCKER_TLS_VERIFY, DOCKER_CERT_PATH: process.env.DOCKER_CERT_PATH }
      for (const name of ["DOCKER_TLS_VERIFY", "DOCKER_CERT_PATH"] as const) {
        if (env[name] === undefined) delete process.env[name]
        else process.env[name] = env[name]
      }
      return saved
    }),
    () => body,
    (saved) =>
      Effect.sync(() => {
        for (const name of ["DOCKER_TLS_VERIFY", "DOCKER_CERT_PATH"] as const) {
          if (saved[name] === undefined) delete process.env[name]
          else process.env[name] = saved[name]
        }
      })
  )

describe.skipIf(dockerUnavailable !== undefined)("the Docker Engine over TLS (DOCKER_TLS_VERIFY, DOCKER_CERT_PATH)", () => {
  const root = dirs.fresh("certs")
  const ca = authority(path.join(root, "ca"), "effect-bash test CA")
  signed(path.join(root, "server"), ca, "127.0.0.1", "subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth")
  signed(path.join(root, "client"), ca, "client", "extendedKeyUsage=clientAuth")
  // A client certificate of another CA, which the engine does not accept.
  const otherCa = authority(path.join(root, "other-ca"), "another CA")
  signed(path.join(root, "stranger"), otherCa, "client", "extendedKeyUsage=clientAuth")
  fs.copyFileSync(path.join(ca, "ca.pem"), path.join(root, "stranger", "ca.pem"))

  const workspace = dirs.fresh("volume-path")
  const settingsFor = (dockerHost: string) => ({ image: testImage, cwd: workspace, workspace: "volume" as const, dockerHost, graceMs: 500 })
  const run = (dockerHost: string, command: string) =>
    Effect.scoped(Effect.gen(function*() {
      const bash = Context.get(yield* Layer.build(DockerBashExecutor.layer(settingsFor(dockerHost))), BashExecutor)
      return yield* bash.run(yield* bash.resolve({ command, stdin: "through TLS\n" }))
    }))

  it.live("with the client's certificates, the calls run through TLS, an exec's input and output included", () =>
    Effect.gen(function*() {
      const proxy = yield* Effect.acquireRelease(Effect.promise(() => tlsProxy(path.join(root, "server"))), (proxy) => Effect.promise(proxy.close))
      const result = yield* withTlsEnv({ DOCKER_TLS_VERIFY: "1", DOCKER_CERT_PATH: path.join(root, "client") }, run(proxy.address, "cat; exit 3"))
      expect(result).toMatchObject({ exitCode: 3, stdout: { text: "through TLS\n" } })
      expect(proxy.clientErrors).toEqual([])
    }).pipe(Effect.scoped), 60_000)

  it.live("without DOCKER_TLS_VERIFY the engine refuses the plain request, and the message says how to set TLS up", () =>
    Effect.gen(function*() {
      const proxy = yield* Effect.acquireRelease(Effect.promise(() => tlsProxy(path.join(root, "server"))), (proxy) => Effect.promise(proxy.close))
      const refused = yield* withTlsEnv({}, Effect.flip(run(proxy.address, "true")))
      expect(refused._tag).toBe("ContainerUnavailableError")
      expect(refused.message).toBe(
        `ping failed on the Docker Engine at ${proxy.address}: Client sent an HTTP request to an HTTPS server.: it speaks TLS; ` +
          "set DOCKER_TLS_VERIFY=1 and DOCKER_CERT_PATH to the directory with its CA (ca.pem) and a client certificate and key (cert.pem, key.pem)"
      )
    }).pipe(Effect.scoped), 60_000)

  it.live("a missing client key, or a client certificate the engine's CA did not sign, fails with a message naming it", () =>
    Effect.gen(function*() {
      const proxy = yield* Effect.acquireRelease(Effect.promise(() => tlsProxy(path.join(root, "server"))), (proxy) => Effect.promise(proxy.close))
      const empty = dirs.fresh("no-certs")
      const missing = yield* withTlsEnv({ DOCKER_TLS_VERIFY: "1", DOCKER_CERT_PATH: empty }, Effect.flip(run(proxy.address, "true")))
      expect(missing.message).toBe(
        `cannot reach the Docker Engine at ${proxy.address} over TLS: DOCKER_TLS_VERIFY is set, but ${empty}/ca.pem cannot be read (ENOENT): ` +
          "set DOCKER_CERT_PATH to the directory with the engine's CA (ca.pem) and the client's certificate and key (cert.pem, key.pem)"
      )
      const stranger = yield* withTlsEnv(
        { DOCKER_TLS_VERIFY: "1", DOCKER_CERT_PATH: path.join(root, "stranger") },
        Effect.flip(run(proxy.address, "true"))
      )
      expect(stranger.message).toMatch(new RegExp(`^the TLS connection to the Docker Engine at ${proxy.address} failed \\(`))
      expect(stranger.message).toContain("check that DOCKER_CERT_PATH holds the CA that signed the engine's certificate")
      expect(proxy.clientErrors.length).toBeGreaterThan(0)
    }).pipe(Effect.scoped), 60_000)
})
