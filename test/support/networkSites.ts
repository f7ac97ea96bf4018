/**
 * The network tests' sites on this machine: HTTP and HTTPS servers on loopback (a self-signed
 * certificate for `secure.test`), and the allow-list both executors' tests use, with every test name
 * pinned to loopback.
 */
import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as https from "node:https"
import type * as net from "node:net"
import * as path from "node:path"

/** Listens on a free loopback port; its number. */
export const listenLoopback = (server: net.Server) =>
  new Promise<number>((resolve) => server.listen(0, "127.0.0.1", () => resolve((server.address() as net.AddressInfo).port)))

/** An HTTPS server for `secure.test`, with a certificate made in `certDir`. */
export const secureServer = (certDir: string, handler: Parameters<typeof https.createServer>[1]) => {
  execFileSync("openssl", [
    "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=secure.test",
    "-keyout", path.join(certDir, "key.pem"), "-out", path.join(certDir, "cert.pem")
  ], { stdio: "ignore" })
  return https.createServer({
    key: fs.readFileSync(path.join(certDir, "key.pem")),
    cert: fs.readFileSync(path.join(certDir, "cert.pem"))
  }, handler)
}

const loopback = "127.0.0.1"

/** The tests' lists: `extraAllow` beside the shared names, and every name in `pinned` on loopback too. */
export const testLists = (extraAllow: ReadonlyArray<string> = [], pinned: ReadonlyArray<string> = []) => ({
  allow: ["example.test", "secure.test", "*.wild.test", ...extraAllow],
  deny: ["bad.wild.test", "worse.wild.test"],
  denyReasons: { "worse.wild.test": "known exfiltration host" },
  hosts: Object.fromEntries(
    ["example.test", "secure.test", "a.wild.test", "bad.wild.test", "worse.wild.test", ...pinned, "other.test"].map((name) => [name, loopback])
  )
})

/** What `env | grep -i _proxy= | sort` prints in a confined command: the bridge's variables. */
export const proxyVariableLines = [
  "ALL_PROXY=socks5h://127.0.0.1:1080",
  "HTTPS_PROXY=http://127.0.0.1:3128",
  "HTTP_PROXY=http://127.0.0.1:3128",
  "NO_PROXY=localhost,127.0.0.1,::1",
  "all_proxy=socks5h://127.0.0.1:1080",
  "http_proxy=http://127.0.0.1:3128",
  "https_proxy=http://127.0.0.1:3128",
  "no_proxy=localhost,127.0.0.1,::1"
]
