/**
 * The allow-list's entries, its checks at layer build and its decisions, with an injected resolver;
 * and the lines a refusal adds to the model's text. No socket, no process.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { AgentTools } from "../../src/services/AgentTools.js"
import { BashExecutor } from "../../src/services/BashExecutor.js"
import * as ScriptedBashExecutor from "../../src/testing/ScriptedBashExecutor.js"
import * as ApprovalScripted from "../../src/testing/ApprovalScripted.js"
import * as FakeConfiningExecutor from "../../src/testing/FakeConfiningExecutor.js"
import * as SandboxSessionsLive from "../../src/layers/SandboxSessionsLive.js"
import { SandboxSessions } from "../../src/services/SandboxSessions.js"
import { compose, composeWith, textOf, withTasks } from "../support/tools.js"
import { deniedAddresses, parseEntry } from "../../src/layers/internal/network/allowList.js"
import type { Policy } from "../../src/layers/internal/network/allowList.js"
import { admit } from "../../src/layers/internal/network/admission.js"
import { bridgeTools, policyEither } from "../../src/layers/internal/network/settings.js"
import { resolveSandboxConfig } from "../../src/layers/sandboxSettings.js"
import { sandboxNotices } from "../../src/tool/sandboxNotices.js"

const policyOf = (network: { allow: Array<string>; deny?: Array<string>; denyReasons?: Record<string, string>; hosts?: Record<string, string> }): Policy => {
  const policy = policyEither({ network, networkAllow: [], networkDeny: [], networkHosts: [] })
  if (policy._tag === "Left" || policy.right === undefined) throw new Error("bad policy")
  return policy.right
}

const decide = (policy: Policy, host: string, port: number, resolved: Record<string, string> = {}) =>
  Effect.promise(() =>
    admit(policy, deniedAddresses(), (name) => resolved[name] === undefined ? Promise.reject(new Error("NXDOMAIN")) : Promise.resolve(resolved[name]!), host, port)
  )

describe("allow-list entries", () => {
  it("parses names, wildcards, ports and IP literals, normalised", () => {
    expect(parseEntry("Example.COM.")).toMatchObject({ host: "example.com", wildcard: false, ip: false, port: undefined })
    expect(parseEntry("*.example.com:8443")).toMatchObject({ host: "example.com", wildcard: true, port: 8443 })
    expect(parseEntry("10.0.0.5:80")).toMatchObject({ host: "10.0.0.5", ip: true, port: 80 })
    expect(parseEntry("[::1]:443")).toMatchObject({ host: "::1", ip: true, port: 443 })
    expect(parseEntry("2001:db8::1")).toMatchObject({ host: "2001:db8::1", ip: true, port: undefined })
  })

  it("rejects what is none of those, saying why", () => {
    const notAName = "is not a host name, a *.domain wildcard or an IP literal, each with an optional :port"
    for (const text of ["exa mple.com", "*", "*.com", "a..b", "-a.com", "http://example.com", "*example.com", ""]) {
      expect({ text, parsed: parseEntry(text) }).toEqual({ text, parsed: notAName })
    }
    expect(parseEntry("example.com:0")).toBe(`has a bad port "0" (1–65535)`)
    expect(parseEntry("example.com:http")).toBe(`has a bad port "http" (1–65535)`)
  })
})

describe("the network settings, checked at layer build", () => {
  it.effect("a bad entry fails naming the field, the entry and its index", () =>
    Effect.gen(function*() {
      const flat = yield* Effect.flip(resolveSandboxConfig({ networkAllow: ["example.com", "bad entry"] }))
      expect(flat).toMatchObject({
        field: "networkAllow",
        message:
          `bash-sandbox: networkAllow entry 1 "bad entry" is not a host name, a *.domain wildcard or an IP literal, each with an optional :port`
      })
      const deny = yield* Effect.flip(resolveSandboxConfig({ network: { allow: ["a.test"], deny: ["b.test:99999"] } }))
      expect(deny.message).toBe(`bash-sandbox: network.deny entry 0 "b.test:99999" has a bad port "99999" (1–65535)`)
      const reasons = yield* Effect.flip(resolveSandboxConfig({ network: { allow: ["a.test"], denyReasons: { "c.test": "no" } } }))
      expect(reasons.message).toBe(`bash-sandbox: network.denyReasons names "c.test", which is not a deny entry`)
      const hosts = yield* Effect.flip(resolveSandboxConfig({ networkAllow: ["a.test"], networkHosts: ["a.test=nowhere"] }))
      expect(hosts.message).toBe(`bash-sandbox: networkHosts entry "a.test": "nowhere" is not an IP address`)
      const pin = yield* Effect.flip(resolveSandboxConfig({ networkAllow: ["a.test"], networkHosts: ["a.test"] }))
      expect(pin.message).toBe(`bash-sandbox: networkHosts entry "a.test": "" is not an IP address`)
      const wildPin = yield* Effect.flip(resolveSandboxConfig({ network: { allow: ["a.test"], hosts: { "*.a.test": "127.0.0.1" } } }))
      expect(wildPin.message).toBe(`bash-sandbox: network.hosts entry "*.a.test" must be NAME=ADDRESS with a host name`)
      const both = yield* Effect.flip(resolveSandboxConfig({ network: { allow: ["a.test"] }, networkAllow: ["b.test"] }))
      expect(both.message).toBe("bash-sandbox: networkAllow and network: { allow } both give an allow-list; give it once")
      const none = yield* Effect.flip(resolveSandboxConfig({ network: "none", networkAllow: ["b.test"] }))
      expect(none.message).toBe(`bash-sandbox: networkAllow needs network "host" (the default) or an allow-list, not "none"`)
      const empty = yield* Effect.flip(resolveSandboxConfig({ network: { allow: [] } }))
      expect(empty.message).toBe(`bash-sandbox: network.allow is empty; use network "none" to reach no name`)
      const shape = yield* Effect.flip(resolveSandboxConfig({ network: "some" as never }))
      expect(shape.message).toBe(`bash-sandbox: network must be "host", "none" or { allow: [...] }, got "some"`)
    }))

  it("the bridge's programs must be on PATH, perl only while the unix-socket filter applies", () => {
    expect(bridgeTools({ allowUnixSockets: false }, "/nonexistent")).toMatchObject({
      _tag: "Left",
      left: { message: "bash-sandbox: network allow-list needs socat on PATH for its bridge (Debian/Ubuntu: apt-get install socat)" }
    })
  })
})

describe("admission", () => {
  const policy = policyOf({
    allow: ["example.test", "*.wild.test", "ported.test:8080", "10.1.2.3"],
    deny: ["bad.wild.test", "*.evil.wild.test:443"],
    denyReasons: { "bad.wild.test": "known exfiltration host" },
    hosts: { "pinned.wild.test": "127.0.0.1" }
  })
  const publicAddress = "93.184.216.34"

  it.effect("the lists decide first, deny over allow, with the entry's reason", () =>
    Effect.gen(function*() {
      const resolved = { "example.test": publicAddress, "a.wild.test": publicAddress, "ported.test": publicAddress, "x.evil.wild.test": publicAddress }
      expect(yield* decide(policy, "EXAMPLE.test.", 443, resolved)).toEqual({ _tag: "Admitted", address: publicAddress })
      expect(yield* decide(policy, "a.wild.test", 80, resolved)).toEqual({ _tag: "Admitted", address: publicAddress })
      expect(yield* decide(policy, "wild.test", 80, resolved)).toEqual({ _tag: "Refused", refusal: "wild.test:80 — not in the allow-list" })
      expect(yield* decide(policy, "ported.test", 8080, resolved)).toMatchObject({ _tag: "Admitted" })
      expect(yield* decide(policy, "ported.test", 443, resolved)).toEqual({ _tag: "Refused", refusal: "ported.test:443 — not in the allow-list" })
      expect(yield* decide(policy, "bad.wild.test", 80, resolved)).toEqual({ _tag: "Refused", refusal: "bad.wild.test:80 — known exfiltration host" })
      expect(yield* decide(policy, "x.evil.wild.test", 443, resolved)).toEqual({ _tag: "Refused", refusal: "x.evil.wild.test:443 — on the deny-list" })
      expect(yield* decide(policy, "x.evil.wild.test", 80, resolved)).toMatchObject({ _tag: "Admitted" })
    }))

  it.effect("the address is checked once resolved; a listed IP literal and a pinned name are the configurer's choice", () =>
    Effect.gen(function*() {
      for (const address of ["127.0.0.1", "169.254.169.254", "10.0.0.1", "172.16.5.5", "192.168.0.1", "::1", "fe80::1", "::ffff:127.0.0.1", "0.0.0.0"]) {
        expect({ address, admission: yield* decide(policy, "example.test", 80, { "example.test": address }) }).toEqual({
          address,
          admission: { _tag: "Refused", refusal: "example.test:80 — resolves to a denied address" }
        })
      }
      expect(yield* decide(policy, "example.test", 80)).toEqual({ _tag: "Refused", refusal: "example.test:80 — could not be resolved" })
      expect(yield* decide(policy, "10.1.2.3", 22)).toEqual({ _tag: "Admitted", address: "10.1.2.3" })
      expect(yield* decide(policy, "10.1.2.4", 22)).toEqual({ _tag: "Refused", refusal: "10.1.2.4:22 — not in the allow-list" })
      expect(yield* decide(policy, "pinned.wild.test", 80)).toEqual({ _tag: "Admitted", address: "127.0.0.1" })
    }))
})

describe("what the model reads", () => {
  it("each refusal is its own line, before a file denial", () => {
    const networkRefusals = ["[network: refused example.com:443 — not in the allow-list]"]
    expect(sandboxNotices({ mode: "read-only", denied: false, networkRefusals }, false)).toEqual(networkRefusals)
    expect(sandboxNotices({ mode: "read-only", denied: true, networkRefusals }, false)).toEqual([
      "[network: refused example.com:443 — not in the allow-list]",
      "[sandbox: file access denied under read-only mode]"
    ])
  })
})

/** The scripted executor, reporting a sandbox with an allow-listed network. */
const allowListed = Layer.effect(
  BashExecutor,
  Effect.map(BashExecutor, (executor) => ({
    ...executor,
    network: { allow: ["registry.npmjs.org", "*.github.com:443"], deny: ["gist.github.com"] }
  }))
).pipe(Layer.provideMerge(ScriptedBashExecutor.layer()))

describe("the allow-list, as the model is told", () => {
  it.effect("a prompt section lists what is allowed and what a refusal line means", () =>
    Effect.gen(function*() {
      const tools = yield* AgentTools
      expect(tools.promptSections.map(({ name, order }) => [name, order])).toEqual([["tool:bash", 105], ["tool:bash:network", 107]])
      expect(tools.promptSections[1]!.text).toBe(
        "Sandboxed commands reach the network only through a proxy that admits these names: registry.npmjs.org, " +
          "*.github.com:443 (never gist.github.com). Clients that honour HTTP_PROXY, HTTPS_PROXY and ALL_PROXY " +
          "(curl, git over http(s), npm, pip) work unchanged; DNS lookups, UDP and direct connections fail. " +
          "`[network: refused <name>:<port> — <reason>]` at the end of a result means the proxy refused that " +
          "connection: a policy decision, not a fault of the command, so do not look for another way around it; " +
          "tell the user which name the command needed."
      )
    }).pipe(Effect.provide(compose({ executor: allowListed }))))
})

/** The fake confining executor, reporting an allow-listed network, under the live session store. */
const sessionsOver = (network: BashExecutor.NetworkFacts | undefined) => {
  const executor = FakeConfiningExecutor.layer({ sandboxMode: "read-only", workspaceRoot: "/work/space", cwd: "/work/space" })
  const reporting = network === undefined
    ? executor
    : Layer.effect(BashExecutor, Effect.map(BashExecutor, (fake) => ({ ...fake, network }))).pipe(Layer.provideMerge(executor))
  return composeWith({ executor: Layer.provideMerge(SandboxSessionsLive.layer, reporting), services: withTasks(ApprovalScripted.layer([])) })
}

const networkAllowRun = Effect.flatMap(FakeConfiningExecutor.FakeConfiningExecutor, (executor) => executor.calls).pipe(
  Effect.map((calls) => calls.map((call) => call.spec.sandboxPolicy?.networkAllow))
)

describe("a session's own network allowances", () => {
  const session = { id: "s-net", cwd: "/work/space" }
  const other = { id: "s-other", cwd: "/work/space" }
  const call = { command: "curl -s https://api.example.com/", description: "Fetch" }

  it.effect("reach the session's next calls only, until cleared; a bad entry is named", () =>
    Effect.gen(function*() {
      const sessions = yield* SandboxSessions
      yield* textOf("bash", call, { session })
      yield* sessions.allowNetwork(session.id, ["api.example.com:443"])
      expect(yield* sessions.networkOf(session.id)).toEqual(["api.example.com:443"])
      yield* textOf("bash", call, { session })
      yield* textOf("bash", call, { session: other })
      yield* sessions.allowNetwork(session.id, undefined)
      yield* textOf("bash", call, { session })
      expect(yield* networkAllowRun).toEqual([undefined, ["api.example.com:443"], undefined, undefined])
      expect(yield* Effect.flip(sessions.allowNetwork(session.id, ["ok.test", "not a name"]))).toMatchObject({
        field: "networkAllow",
        message: `networkAllow entry 1 "not a name" is not a host name, a *.domain wildcard or an IP literal, each with an optional :port`
      })
    }).pipe(Effect.provide(sessionsOver({ allow: ["registry.npmjs.org"], deny: [] }))))

  it.effect("need a sandbox with an allow-listed network", () =>
    Effect.gen(function*() {
      expect(yield* Effect.flip((yield* SandboxSessions).allowNetwork(session.id, ["api.example.com"]))).toMatchObject({
        field: "networkAllow",
        message: "networkAllow needs a sandbox with network: { allow }"
      })
    }).pipe(Effect.provide(sessionsOver(undefined))))
})
