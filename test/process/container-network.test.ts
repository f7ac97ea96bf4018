/**
 * The container executor's allow-listed network against the local engine: boxes on the engine's
 * `none` network reach loopback HTTP and HTTPS servers behind test names (pinned with `hosts`)
 * through their session's proxies, with curl from an image that has it; everything else is refused
 * with the sandbox's exact lines. An engine that cannot see this machine's files is refused at build.
 */
import { describe, expect, it } from "@effect/vitest"
import { afterAll, beforeAll } from "vitest"
import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as http from "node:http"
import * as https from "node:https"
import * as path from "node:path"
import { Effect, Exit, Layer, Scope } from "effect"
import * as DockerBashExecutor from "../../src/layers/DockerBashExecutor.js"
import { BashExecutor } from "../../src/services/BashExecutor.js"
import { socatUsable } from "../support/bwrap.js"
import { containerState, containersWith, dockerUnavailable, mountSource } from "../support/docker.js"
import { listenLoopback, proxyVariableLines, secureServer, testLists } from "../support/networkSites.js"
import { tempDirs } from "../support/tempDirs.js"

const dirs = tempDirs("effect-bash-boxnet", "/var/tmp")
afterAll(dirs.removeAll)

/** The test image with curl (scripts/docker-test-image.sh builds it from this host's files). */
const curlImage = "effect-bash-net-test:latest"
const remote = process.env.EFFECT_BASH_TEST_REMOTE_ENGINE

let httpServer: http.Server
let httpsServer: https.Server
let httpPort = 0
let httpsPort = 0
let workspace = ""

const usable = dockerUnavailable === undefined && socatUsable

beforeAll(async () => {
  if (!usable) return
  execFileSync("bash", [path.join(import.meta.dirname, "../../scripts/docker-test-image.sh"), curlImage, "curl"], { stdio: "ignore" })
  workspace = dirs.fresh("workspace")
  httpServer = http.createServer((request, response) => response.end(`page of ${request.headers.host}\n`))
  httpsServer = secureServer(dirs.fresh("cert"), (request, response) => response.end(`secure page of ${request.headers.host}\n`))
  httpPort = await listenLoopback(httpServer)
  httpsPort = await listenLoopback(httpsServer)
}, 60_000)
afterAll(async () => {
  await Promise.all([httpServer, httpsServer].map((server) =>
    server === undefined ? undefined : new Promise((resolve) => server.close(resolve))
  ))
})

const loopback = "127.0.0.1"
const settings = (): DockerBashExecutor.Settings.Input => ({
  image: curlImage,
  workspaceRoot: workspace,
  graceMs: 1_000,
  network: testLists()
})

const run = (command: string) =>
  Effect.gen(function*() {
    const bash = yield* BashExecutor
    return yield* bash.run(yield* bash.resolve({ command, workdir: workspace, timeoutMs: 30_000 }))
  })

const curl = (url: string) => `curl -sS --max-time 10 ${url}`

describe.skipIf(!usable)("DockerBashExecutor with network: { allow } (the local engine)", () => {
  it.live("allowed names are reached over HTTP, HTTPS (CONNECT) and SOCKS5; nothing is refused", () =>
    Effect.gen(function*() {
      const result = yield* run([
        curl(`http://example.test:${httpPort}/`),
        curl(`-k https://secure.test:${httpsPort}/`),
        curl(`http://a.wild.test:${httpPort}/`),
        curl(`--proxy "$ALL_PROXY" http://example.test:${httpPort}/socks`)
      ].join(" && "))
      expect(result.stderr.text).toBe("")
      expect(result.stdout.text).toBe(
        `page of example.test:${httpPort}\n` +
          `secure page of secure.test:${httpsPort}\n` +
          `page of a.wild.test:${httpPort}\n` +
          `page of example.test:${httpPort}\n`
      )
      expect(result.networkRefusals).toBeUndefined()
      expect(result.sandbox).toBeUndefined()
    }).pipe(Effect.provide(DockerBashExecutor.layer(settings()))))

  it.live("each refused connection adds its exact line; the executor reports its lists", () =>
    Effect.gen(function*() {
      const bash = yield* BashExecutor
      expect(bash.network).toEqual({ allow: ["example.test", "secure.test", "*.wild.test"], deny: ["bad.wild.test", "worse.wild.test"] })
      expect(bash.container?.network).toBe("allow-list")
      const result = yield* run([
        curl(`http://other.test:${httpPort}/`),
        curl(`-k https://other.test:${httpsPort}/`),
        curl(`http://wild.test:${httpPort}/`),
        curl(`http://bad.wild.test:${httpPort}/`),
        curl(`http://worse.wild.test:${httpPort}/`),
        curl(`--proxy "$ALL_PROXY" http://socks.other.test:${httpPort}/`),
        "true"
      ].join(" >/dev/null 2>&1; "))
      expect(result.networkRefusals).toEqual([
        `[network: refused other.test:${httpPort} — not in the allow-list]`,
        `[network: refused other.test:${httpsPort} — not in the allow-list]`,
        `[network: refused wild.test:${httpPort} — not in the allow-list]`,
        `[network: refused bad.wild.test:${httpPort} — on the deny-list]`,
        `[network: refused worse.wild.test:${httpPort} — known exfiltration host]`,
        `[network: refused socks.other.test:${httpPort} — not in the allow-list]`
      ])
      // The next call reports only its own.
      const next = yield* run(curl(`http://example.test:${httpPort}/`))
      expect(next.networkRefusals).toBeUndefined()
    }).pipe(Effect.provide(DockerBashExecutor.layer(settings()))))

  it.live("nothing leaves past the proxies: raw TCP to the host, UDP and DNS fail; the box sees the proxy variables", () =>
    Effect.gen(function*() {
      const result = yield* run([
        `(exec 3<>/dev/tcp/${loopback}/${httpPort}) 2>/dev/null && echo tcp-open || echo tcp-refused`,
        `(exec 3<>/dev/tcp/192.0.2.1/80) 2>/dev/null && echo route-open || echo route-refused`,
        `(echo x > /dev/udp/8.8.8.8/53) 2>/dev/null && echo udp-sent || echo udp-refused`,
        `(echo x > /dev/udp/${loopback}/53) 2>/dev/null; (exec 3<>/dev/tcp/${loopback}/53) 2>/dev/null && echo dns-open || echo dns-refused`,
        `curl -s --noproxy '*' --max-time 5 http://example.test:${httpPort}/ || echo direct-refused`,
        `env | grep -i _proxy= | sort`
      ].join("; "))
      expect(result.stdout.text).toBe([
        "tcp-refused",
        "route-refused",
        "udp-refused",
        "dns-refused",
        "direct-refused",
        ...proxyVariableLines,
        ""
      ].join("\n"))
    }).pipe(Effect.provide(DockerBashExecutor.layer(settings()))))

  it.live("a background task reaches allowed names and reports its refusals when it settles", () =>
    Effect.gen(function*() {
      const bash = yield* BashExecutor
      const task = yield* bash.start(yield* bash.resolve({
        command: `${curl(`http://example.test:${httpPort}/`)}; ${curl(`http://other.test:${httpPort}/`)} >/dev/null; true`,
        workdir: workspace
      }))
      const state = yield* task.done
      expect(state.networkRefusals).toEqual([`[network: refused other.test:${httpPort} — not in the allow-list]`])
      expect((yield* task.readOutput).delta).toContain(`page of example.test:${httpPort}\n`)
    }).pipe(Effect.provide(DockerBashExecutor.layer(settings()))))

  it.live("the flat networkAllow form does the same; the relays run as the supervisor; the proxies go with the layer", () =>
    Effect.gen(function*() {
      const session = `boxnet-flat-${process.pid}`
      const scope = yield* Scope.make()
      // Closed again (a no-op) at the end: a failed assertion leaves nothing behind either.
      yield* Effect.addFinalizer(() => Scope.close(scope, Exit.void))
      const layer = DockerBashExecutor.layer({
        image: curlImage,
        workspaceRoot: workspace,
        graceMs: 1_000,
        networkAllow: ["example.test"],
        networkHosts: ["example.test=127.0.0.1"]
      })
      const context = yield* Layer.buildWithScope(layer, scope)
      const result = yield* Effect.flatMap(BashExecutor, (bash) =>
        Effect.flatMap(
          bash.resolve({ command: curl(`http://example.test:${httpPort}/`), workdir: workspace, dshEnv: { DSH_SESSION_ID: session } }),
          bash.run
        )).pipe(Effect.provide(context))
      expect(result.stdout.text).toBe(`page of example.test:${httpPort}\n`)
      const [box] = containersWith({ "effect-bash.session": session })
      const proxyDir = mountSource(box!, "/.effect-bash-network/proxies")
      expect(fs.existsSync(path.join(proxyDir, "http.sock"))).toBe(true)
      expect(box).toBeDefined()
      const relays = execFileSync("docker", ["top", box!, "-eo", "pid,uid,args"], { encoding: "utf8" }).split("\n")
        .filter((line) => line.includes("UNIX-CONNECT:/.effect-bash-network/proxies/"))
      expect(relays).toHaveLength(2)
      // The supervisor's uid (wrapper.ts): not the box's user, who cannot signal them.
      for (const relay of relays) expect(relay.trim().split(/\s+/)[1]).toBe("2147483646")
      yield* Scope.close(scope, Exit.void)
      expect(fs.existsSync(path.dirname(proxyDir))).toBe(false)
      expect(containersWith({ "effect-bash": "1" })).not.toContain(box)
    }).pipe(Effect.scoped))

  it.live("a box stopped when idle starts its relays again with the session's next call; a call's own networkAllow holds for it", () =>
    Effect.gen(function*() {
      const session = `boxnet-${process.pid}`
      const context = yield* Layer.build(DockerBashExecutor.layer({ ...settings(), idleStopMs: 100 }))
      const bash = yield* Effect.provide(BashExecutor, context)
      const call = (command: string, networkAllow?: ReadonlyArray<string>) =>
        Effect.flatMap(
          bash.resolve({ command, workdir: workspace, timeoutMs: 30_000, dshEnv: { DSH_SESSION_ID: session }, ...(networkAllow === undefined ? {} : { networkAllow }) }),
          bash.run
        )
      expect((yield* call(curl(`http://example.test:${httpPort}/`))).stdout.text).toBe(`page of example.test:${httpPort}\n`)
      const [box] = containersWith({ "effect-bash.session": session })
      const deadline = Date.now() + 20_000
      while (containerState(box!) !== "exited" && Date.now() < deadline) yield* Effect.sleep(50)
      expect(containerState(box!)).toBe("exited")
      const again = yield* call(`${curl(`http://example.test:${httpPort}/`)}; ${curl(`http://other.test:${httpPort}/`)}`, ["other.test"])
      expect(again.stdout.text).toBe(`page of example.test:${httpPort}\npage of other.test:${httpPort}\n`)
      expect(containersWith({ "effect-bash.session": session })).toEqual([box])
      const after = yield* call(`${curl(`http://other.test:${httpPort}/`)} >/dev/null; true`)
      expect(after.networkRefusals).toEqual([`[network: refused other.test:${httpPort} — not in the allow-list]`])
    }).pipe(Effect.scoped), { timeout: 60_000 })

  it.live("relays that never listen fail the call with a clear error and leave no box (a static socat is copied as it is)", () =>
    Effect.gen(function*() {
      // A `socat` that is no dynamic executable (so it is copied as it is) and exits at once.
      const bin = dirs.fresh("fake-socat")
      fs.writeFileSync(path.join(bin, "socat"), "#!/bin/sh\nexit 1\n", { mode: 0o755 })
      const saved = process.env.PATH
      const session = `boxnet-dead-${process.pid}`
      const context = yield* Effect.acquireUseRelease(
        Effect.sync(() => {
          process.env.PATH = `${bin}:${saved}`
        }),
        () => Layer.build(DockerBashExecutor.layer(settings())),
        () => Effect.sync(() => {
          process.env.PATH = saved
        })
      )
      const bash = yield* Effect.provide(BashExecutor, context)
      const failure = yield* Effect.flip(Effect.flatMap(
        bash.resolve({ command: "echo ran", workdir: workspace, dshEnv: { DSH_SESSION_ID: session } }),
        bash.run
      ))
      expect({ tag: failure._tag, message: failure.message }).toEqual({
        tag: "SpawnError",
        message: "the command's container could not be started: the container's network relays did not start"
      })
      expect(containersWith({ "effect-bash.session": session })).toEqual([])
    }).pipe(Effect.scoped), { timeout: 60_000 })

  it.live("a bad entry fails the build naming it; networkAllow with network bridge is refused", () =>
    Effect.gen(function*() {
      const bad = yield* Effect.flip(Layer.build(DockerBashExecutor.layer({ image: curlImage, networkAllow: ["example.test", "exa mple.test"] })))
      expect(bad).toMatchObject({
        _tag: "LocalBashExecutorConfigError",
        field: "networkAllow",
        message:
          `bash-container: networkAllow entry 1 "exa mple.test" is not a host name, a *.domain wildcard or an IP literal, each with an optional :port`
      })
      const bridge = yield* Effect.flip(Layer.build(DockerBashExecutor.layer({ image: curlImage, network: "bridge", networkAllow: ["a.test"] })))
      expect(bridge).toMatchObject({
        field: "networkAllow",
        message: `bash-container: networkAllow needs network "none" (the default) or an allow-list, not "bridge"`
      })
    }).pipe(Effect.scoped))
})

describe.skipIf(remote === undefined)("DockerBashExecutor with network: { allow } on an engine that shares no file system", () => {
  it.live("the build is refused, naming the field and the engine", () =>
    Effect.gen(function*() {
      const failure = yield* Effect.flip(Layer.build(DockerBashExecutor.layer({
        image: "effect-bash-test:latest",
        workspace: "volume",
        cwd: "/work/project",
        dockerHost: remote,
        networkAllow: ["example.test"]
      })))
      expect(failure).toMatchObject({
        _tag: "LocalBashExecutorConfigError",
        field: "networkAllow",
        message: `bash-container: networkAllow: an allow-list needs an engine on this machine, reached over a unix socket ` +
          `(its containers reach the proxies through sockets bound in from this machine); the engine at ${remote} ` +
          `cannot see this machine's files: use network "none" or "bridge" there`
      })
    }).pipe(Effect.scoped))
})
