/**
 * The done-when, through the built binary: a name on `--network-allow`, pinned to a loopback
 * server with `--network-host`, prints the page; a name not on the list prints the refusal line.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import * as http from "node:http"
import type * as net from "node:net"
import { afterAll, beforeAll } from "vitest"
import { cleanEnv, runCli } from "../support/cli.js"
import { bwrapUsable, socatUsable } from "../support/bwrap.js"
import { dockerUnavailable } from "../support/docker.js"
import { tempDirs } from "../support/tempDirs.js"


const run = (args: ReadonlyArray<string>, env: Record<string, string> = {}) =>
  Effect.promise(() => runCli(["run", ...args], { env: cleanEnv(env) }))

const server = http.createServer((request, response) => response.end(`page of ${request.headers.host}\n`))
let port = 0
beforeAll(() =>
  new Promise<void>((resolve) =>
    server.listen(0, "127.0.0.1", () => {
      port = (server.address() as net.AddressInfo).port
      resolve()
    })
  )
)
afterAll(() => new Promise((resolve) => server.close(resolve)))

describe.skipIf(!bwrapUsable || !socatUsable)("effect-bash run --network-allow", () => {
  it.live("an allowed name prints the page; another prints the refusal line", () =>
    Effect.gen(function*() {
      const flags = ["--sandbox", "workspace-write", "--network-allow", "example.test", "--network-host", "example.test=127.0.0.1"]
      const allowed = yield* run([...flags, "--", `curl -s http://example.test:${port}/`])
      expect(allowed).toMatchObject({ code: 0, stdout: `page of example.test:${port}\n` })
      const refused = yield* run([...flags, "--", `curl -s -o /dev/null http://other.test:${port}/`])
      expect(refused.stdout).toBe(`(no output)\n[network: refused other.test:${port} — not in the allow-list]\n`)
    }))

  it.live("EFFECT_BASH_NETWORK_ALLOW and _HOSTS do the same; a bad entry is named", () =>
    Effect.gen(function*() {
      const env = { EFFECT_BASH_SANDBOX: "read-only", EFFECT_BASH_NETWORK_HOSTS: "example.test=127.0.0.1" }
      const allowed = yield* run(["--", `curl -s http://example.test:${port}/`], { ...env, EFFECT_BASH_NETWORK_ALLOW: "example.test,*.other.test" })
      expect(allowed).toMatchObject({ code: 0, stdout: `page of example.test:${port}\n` })
      const bad = yield* run(["--", "true"], { ...env, EFFECT_BASH_NETWORK_ALLOW: "example.test,exa mple.test" })
      expect(bad.code).not.toBe(0)
      expect(bad.stderr).toContain(
        `networkAllow entry 1 "exa mple.test" is not a host name, a *.domain wildcard or an IP literal, each with an optional :port`
      )
    }))
})

const dirs = tempDirs("effect-bash-cli-boxnet", "/var/tmp")
afterAll(dirs.removeAll)

describe.skipIf(dockerUnavailable !== undefined || !socatUsable)("effect-bash run --container-image --network-allow", () => {
  it.live("an allowed name prints the page in the container; another prints the refusal line", () =>
    Effect.gen(function*() {
      const root = dirs.fresh("workspace")
      // The image with curl, which container-network.test.ts builds from this host's files.
      const flags = [
        "--container-image", "effect-bash-net-test:latest", "--workdir", root,
        "--network-allow", "example.test", "--network-host", "example.test=127.0.0.1"
      ]
      const allowed = yield* run([...flags, "--", `curl -s http://example.test:${port}/`])
      expect(allowed).toMatchObject({ code: 0, stdout: `page of example.test:${port}\n` })
      const refused = yield* run([...flags, "--", `curl -s -o /dev/null http://other.test:${port}/`])
      expect(refused.stdout).toBe(`(no output)\n[network: refused other.test:${port} — not in the allow-list]\n`)
    }))
})
