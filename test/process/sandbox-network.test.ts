/**
 * The sandbox's allow-listed network against real processes: loopback HTTP and HTTPS servers behind
 * test names (pinned with `hosts`, which the proxy uses instead of resolving), reached with curl and
 * git through the bridge; everything else refused with its exact line. No internet is needed.
 */
import { describe, expect, it } from "@effect/vitest"
import { afterAll, beforeAll } from "vitest"
import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as http from "node:http"
import * as https from "node:https"
import * as path from "node:path"
import { Effect, Exit, Layer, Scope } from "effect"
import * as SandboxBashExecutor from "../../src/layers/SandboxBashExecutor.js"
import { BashExecutor } from "../../src/services/BashExecutor.js"
import { bwrapUsable, socatUsable } from "../support/bwrap.js"
import { commandLineOf, liveProcesses } from "../support/processes.js"
import { listenLoopback, proxyVariableLines, secureServer, testLists } from "../support/networkSites.js"
import { tempDirs } from "../support/tempDirs.js"


const dirs = tempDirs("effect-bash-network", "/var/tmp")
afterAll(dirs.removeAll)

let httpServer: http.Server
let httpsServer: https.Server
let httpPort = 0
let httpsPort = 0
let gitDir = ""

beforeAll(async () => {
  if (!bwrapUsable || !socatUsable) return
  // A bare repository served over git's dumb HTTP protocol, as a static tree.
  gitDir = dirs.fresh("git")
  const work = path.join(gitDir, "work")
  execFileSync("sh", ["-c", [
    `git init -q ${work} && cd ${work} && echo from-git > file.txt && git add file.txt`,
    `git -c user.email=t@t -c user.name=t commit -qm one`,
    `git clone -q --bare ${work} ${gitDir}/repo.git && cd ${gitDir}/repo.git && git update-server-info`
  ].join(" && ")])
  httpServer = http.createServer((request, response) => {
    const file = path.join(gitDir, decodeURIComponent(new URL(request.url ?? "/", "http://x").pathname))
    if (request.url?.startsWith("/repo.git/") && fs.existsSync(file) && fs.statSync(file).isFile()) {
      return void response.end(fs.readFileSync(file))
    }
    // An npm registry's packument, as much of it as `npm view` reads.
    if (request.url === "/npm/stub-package") {
      response.setHeader("content-type", "application/json")
      return void response.end(JSON.stringify({
        name: "stub-package",
        "dist-tags": { latest: "1.2.3" },
        versions: { "1.2.3": { name: "stub-package", version: "1.2.3", dist: { tarball: "http://example.test/x.tgz" } } }
      }))
    }
    response.end(`page of ${request.headers.host}\n`)
  })
  httpsServer = secureServer(dirs.fresh("cert"), (request, response) => response.end(`secure page of ${request.headers.host}\n`))
  httpPort = await listenLoopback(httpServer)
  httpsPort = await listenLoopback(httpsServer)
})
afterAll(async () => {
  await Promise.all([httpServer, httpsServer].map((server) =>
    server === undefined ? undefined : new Promise((resolve) => server.close(resolve))
  ))
})

const loopback = "127.0.0.1"
const settings = (): SandboxBashExecutor.Settings.Input => ({
  graceMs: 1_000,
  sandboxMode: "read-only",
  network: testLists([`ported.test:${httpPort}`, "localhost", "nowhere.invalid"], ["ported.test"])
})

const run = (command: string) =>
  Effect.gen(function*() {
    const bash = yield* BashExecutor
    return yield* bash.run(yield* bash.resolve({ command, timeoutMs: 30_000 }))
  })

const node = JSON.stringify(process.execPath)
/** Connects to the host's own unix socket: fails at `socket()` under the filter. */
const unixSocket = `const s = require("net").connect("/var/run/nothing-here.sock"); ` +
  `s.on("error", (e) => process.exit(e.code === "EPERM" ? 1 : 0))`
const curl = (url: string) => `curl -sS --max-time 10 ${url}`

describe.skipIf(!bwrapUsable || !socatUsable)("SandboxBashExecutor with network: { allow }", () => {
  it.live("allowed names are reached over HTTP, HTTPS (CONNECT) and SOCKS5; nothing is refused", () =>
    Effect.gen(function*() {
      const result = yield* run([
        curl(`http://example.test:${httpPort}/`),
        curl(`-k https://secure.test:${httpsPort}/`),
        curl(`http://a.wild.test:${httpPort}/`),
        curl(`http://ported.test:${httpPort}/`),
        curl(`--proxy "$ALL_PROXY" http://example.test:${httpPort}/socks`)
      ].join(" && "))
      expect(result.stderr.text).toBe("")
      expect(result.stdout.text).toBe(
        `page of example.test:${httpPort}\n` +
          `secure page of secure.test:${httpsPort}\n` +
          `page of a.wild.test:${httpPort}\n` +
          `page of ported.test:${httpPort}\n` +
          `page of example.test:${httpPort}\n`
      )
      expect(result.sandbox).toEqual({ mode: "read-only", denied: false, enforcement: "full" })
    }).pipe(Effect.provide(SandboxBashExecutor.layer(settings()))))

  it.live("git clones over http through the proxy", () =>
    Effect.gen(function*() {
      const root = dirs.fresh("clone")
      const bash = yield* BashExecutor
      const result = yield* bash.run(yield* bash.resolve({
        command: `git clone -q http://example.test:${httpPort}/repo.git repo && cat repo/file.txt`,
        workdir: root,
        timeoutMs: 30_000,
        sandboxPolicy: { mode: "workspace-write", workspaceRoot: root }
      }))
      expect(result.stdout.text).toBe("from-git\n")
      expect(result.sandbox?.networkRefusals).toBeUndefined()
    }).pipe(Effect.provide(SandboxBashExecutor.layer(settings()))))

  it.live("each refused connection adds its exact line: lists, wildcard, port, deny over allow, reasons, addresses", () =>
    Effect.gen(function*() {
      const result = yield* run([
        curl(`http://other.test:${httpPort}/`),
        curl(`-k https://other.test:${httpsPort}/`),
        curl(`http://wild.test:${httpPort}/`),
        curl(`http://bad.wild.test:${httpPort}/`),
        curl(`http://worse.wild.test:${httpPort}/`),
        curl(`http://ported.test:${httpsPort}/`),
        curl(`--noproxy "" http://localhost:${httpPort}/`),
        curl(`--proxy "$ALL_PROXY" http://socks.other.test:${httpPort}/`),
        "true"
      ].join("; "))
      expect(result.sandbox?.networkRefusals).toEqual([
        `[network: refused other.test:${httpPort} — not in the allow-list]`,
        `[network: refused other.test:${httpsPort} — not in the allow-list]`,
        `[network: refused wild.test:${httpPort} — not in the allow-list]`,
        `[network: refused bad.wild.test:${httpPort} — on the deny-list]`,
        `[network: refused worse.wild.test:${httpPort} — known exfiltration host]`,
        `[network: refused ported.test:${httpsPort} — not in the allow-list]`,
        `[network: refused localhost:${httpPort} — resolves to a denied address]`,
        `[network: refused socks.other.test:${httpPort} — not in the allow-list]`
      ])
      expect(result.stdout.text).not.toContain("page of")
    }).pipe(Effect.provide(SandboxBashExecutor.layer(settings()))))

  it.live("nothing leaves past the proxies: raw TCP, UDP, DNS and unix sockets fail", () =>
    Effect.gen(function*() {
      const result = yield* run([
        `(exec 3<>/dev/tcp/${loopback}/${httpPort}) 2>/dev/null && echo tcp-open || echo tcp-refused`,
        `(echo x > /dev/udp/8.8.8.8/53) 2>/dev/null && echo udp-sent || echo udp-refused`,
        `getent hosts example.com >/dev/null && echo dns-answered || echo dns-refused`,
        `curl -s --noproxy '*' --max-time 5 http://example.test:${httpPort}/ || echo direct-refused`,
        `${node} -e ${JSON.stringify(unixSocket)} 2>/dev/null && echo unix-open || echo unix-refused`
      ].join("; "))
      expect(result.stdout.text).toBe("tcp-refused\nudp-refused\ndns-refused\ndirect-refused\nunix-refused\n")
    }).pipe(Effect.provide(SandboxBashExecutor.layer(settings()))))

  it.live("the command sees the proxy variables", () =>
    Effect.gen(function*() {
      const result = yield* run("env | grep -i _proxy= | sort")
      expect(result.stdout.text).toBe([
        ...proxyVariableLines,
        ""
      ].join("\n"))
    }).pipe(Effect.provide(SandboxBashExecutor.layer(settings()))))

  it.live("the relays die with the call; the sockets go with the call and their directory with the layer", () =>
    Effect.gen(function*() {
      const scope = yield* Scope.make()
      const context = yield* Layer.buildWithScope(SandboxBashExecutor.layer(settings()), scope)
      const result = yield* run("grep -o '/[^ ]*effect-bash-net-[^ ]*' /proc/self/mountinfo | head -1").pipe(
        Effect.provide(context)
      )
      const socketDir = result.stdout.text.trim()
      expect(socketDir).toMatch(/effect-bash-net-/)
      expect(fs.existsSync(socketDir)).toBe(false)
      const relays = liveProcesses().filter((row) => commandLineOf(row.pid).includes(`UNIX-CONNECT:${socketDir}`))
      expect(relays).toEqual([])
      expect(fs.existsSync(path.dirname(socketDir))).toBe(true)
      yield* Scope.close(scope, Exit.void)
      expect(fs.existsSync(path.dirname(socketDir))).toBe(false)
    }))

  it.live("a name the system cannot resolve is refused", () =>
    Effect.gen(function*() {
      const result = yield* run(`${curl("http://nowhere.invalid/")}; true`)
      expect(result.sandbox?.networkRefusals).toEqual(["[network: refused nowhere.invalid:80 — could not be resolved]"])
    }).pipe(Effect.provide(SandboxBashExecutor.layer(settings()))))

  it.live("with allowUnixSockets the filter stays off and the bridge still works", () =>
    Effect.gen(function*() {
      const result = yield* run(
        `${curl(`http://example.test:${httpPort}/`)}; ` +
          `${node} -e ${JSON.stringify(unixSocket)} && echo unix-open`
      )
      expect(result.stdout.text).toBe(`page of example.test:${httpPort}\nunix-open\n`)
    }).pipe(Effect.provide(SandboxBashExecutor.layer({ ...settings(), allowUnixSockets: true }))))

  it.live("workspace-write sees the sockets under its private /tmp too", () =>
    Effect.gen(function*() {
      const root = dirs.fresh("root")
      const bash = yield* BashExecutor
      const result = yield* bash.run(yield* bash.resolve({
        command: curl(`http://example.test:${httpPort}/`),
        sandboxPolicy: { mode: "workspace-write", workspaceRoot: root }
      }))
      expect(result.stdout.text).toBe(`page of example.test:${httpPort}\n`)
    }).pipe(Effect.provide(SandboxBashExecutor.layer(settings()))))

  it.live("a background task reaches allowed names and reports its refusals when it settles", () =>
    Effect.gen(function*() {
      const bash = yield* BashExecutor
      const task = yield* bash.start(yield* bash.resolve({
        command: `${curl(`http://example.test:${httpPort}/`)}; ${curl(`http://other.test:${httpPort}/`)} >/dev/null; true`
      }))
      const state = yield* task.done
      expect(state.sandbox?.networkRefusals).toEqual([`[network: refused other.test:${httpPort} — not in the allow-list]`])
      expect((yield* task.readOutput).delta).toContain(`page of example.test:${httpPort}\n`)
    }).pipe(Effect.provide(SandboxBashExecutor.layer(settings()))))

  it.live("npm reads a package's metadata from a registry stub through the proxy", () =>
    Effect.gen(function*() {
      const root = dirs.fresh("npm")
      const bash = yield* BashExecutor
      const result = yield* bash.run(yield* bash.resolve({
        command: `npm view stub-package version --registry http://example.test:${httpPort}/npm/ --cache ${root}/cache ` +
          `--userconfig ${root}/npmrc --no-update-notifier --fetch-retries 0`,
        workdir: root,
        env: { HOME: root },
        timeoutMs: 60_000,
        sandboxPolicy: { mode: "workspace-write", workspaceRoot: root }
      }))
      expect(result.stdout.text).toBe("1.2.3\n")
      expect(result.sandbox?.networkRefusals).toBeUndefined()
    }).pipe(Effect.provide(SandboxBashExecutor.layer(settings()))))

  it.live("relays that never listen fail the call as the runner's failure, within the bridge's bound", () =>
    Effect.gen(function*() {
      // A `socat` that exits at once: the bridge waits its bound, then reports and the command never runs.
      const bin = dirs.fresh("fake-socat")
      fs.writeFileSync(path.join(bin, "socat"), "#!/bin/sh\nexit 1\n", { mode: 0o755 })
      const saved = process.env.PATH
      const scope = yield* Scope.make()
      const context = yield* Effect.acquireUseRelease(
        Effect.sync(() => {
          process.env.PATH = `${bin}:${saved}`
        }),
        () => Layer.buildWithScope(SandboxBashExecutor.layer(settings()), scope),
        () => Effect.sync(() => {
          process.env.PATH = saved
        })
      )
      const failure = yield* Effect.flip(run("echo ran").pipe(Effect.provide(context)))
      expect(failure).toMatchObject({ _tag: "SandboxUnavailableError", runnerFailure: "bwrap: the network bridge did not start" })
      yield* Scope.close(scope, Exit.void)
    }))

  it.live("a call's own networkAllow reaches a name for that call only; the deny-list still wins; a bad entry is named", () =>
    Effect.gen(function*() {
      const bash = yield* BashExecutor
      const policy = (networkAllow: ReadonlyArray<string>) => ({ mode: "read-only" as const, workspaceRoot: "/", networkAllow })
      const command = `${curl(`http://other.test:${httpPort}/`)}; ${curl(`http://bad.wild.test:${httpPort}/`)} >/dev/null; true`
      const widened = yield* bash.run(yield* bash.resolve({ command, sandboxPolicy: policy(["other.test", "*.wild.test"]) }))
      expect(widened.stdout.text).toBe(`page of other.test:${httpPort}\n`)
      expect(widened.sandbox?.networkRefusals).toEqual([`[network: refused bad.wild.test:${httpPort} — on the deny-list]`])
      const next = yield* run(command)
      expect(next.sandbox?.networkRefusals).toEqual([
        `[network: refused other.test:${httpPort} — not in the allow-list]`,
        `[network: refused bad.wild.test:${httpPort} — on the deny-list]`
      ])
      const bad = yield* Effect.flip(Effect.flatMap(bash.resolve({ command, sandboxPolicy: policy(["a b"]) }), bash.run))
      expect(bad).toMatchObject({
        _tag: "BashRequestError",
        field: "sandboxPolicy.networkAllow",
        message: `sandboxPolicy.networkAllow entry 0 "a b" is not a host name, a *.domain wildcard or an IP literal, each with an optional :port`
      })
    }).pipe(Effect.provide(SandboxBashExecutor.layer(settings()))))

  it.live("a call's networkAllow needs a sandbox with an allow-list", () =>
    Effect.gen(function*() {
      const bash = yield* BashExecutor
      const spec = yield* bash.resolve({ command: "true", sandboxPolicy: { mode: "read-only", workspaceRoot: "/", networkAllow: ["a.test"] } })
      expect(yield* Effect.flip(bash.run(spec))).toMatchObject({
        _tag: "BashRequestError",
        message: "sandboxPolicy.networkAllow needs a sandbox with network: { allow }"
      })
    }).pipe(Effect.provide(SandboxBashExecutor.layer({ graceMs: 1_000 }))))
})
