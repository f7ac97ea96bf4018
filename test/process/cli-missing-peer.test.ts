/**
 * The bundled command run where `docker-modem` (an optional peer, not bundled) is not installed: a
 * copy of `dist/bin/` in a directory with no `node_modules` above it, as `npx effect-bash` installs
 * it. `--container-image` then cannot start, and an MCP client is told why, not just that the
 * connection closed.
 */
import { describe, expect, it } from "@effect/vitest"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js"
import { Effect } from "effect"
import { cpSync, existsSync, mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { cleanEnv, cliPath } from "../support/cli.js"
import { pollUntil } from "../support/poll.js"

/** A copy of the built `dist/bin/` where no `node_modules` can be found, removed with the scope. */
const isolatedBin = Effect.acquireRelease(
  Effect.sync(() => {
    const directory = mkdtempSync(join(tmpdir(), "effect-bash-no-peers-"))
    cpSync(dirname(cliPath), directory, { recursive: true, filter: (source) => !source.endsWith(".cache") })
    return directory
  }),
  (directory) => Effect.sync(() => rmSync(directory, { recursive: true, force: true }))
)

describe("the command without docker-modem", () => {
  it.scopedLive("mcp --container-image answers the client's initialize with the missing package and how to add it", () =>
    Effect.gen(function*() {
      const directory = yield* isolatedBin
      const transport = new StdioClientTransport({
        command: process.execPath,
        args: [join(directory, "effect-bash.js"), "mcp", "--container-image", "effect-bash-test:latest"],
        cwd: directory,
        env: cleanEnv(),
        stderr: "pipe"
      })
      const client = new Client({ name: "missing-peer-test", version: "0.0.0" })
      const failure = yield* Effect.flip(Effect.tryPromise(() => client.connect(transport)))
      const pid = transport.pid
      yield* Effect.promise(() => client.close())
      // The command writes its code cache into the copy as it exits: the copy goes once it has.
      const gone = yield* Effect.promise(() => pollUntil(() => pid === null || !existsSync(`/proc/${pid}`), Boolean, 10_000))
      expect(gone).toBe(true)
      expect(String(failure.cause)).toContain(
        "MCP error -32603: effect-bash: the container executor needs the docker-modem package: npm install docker-modem@5 " +
          "(the command through npx: npx -y -p effect-bash -p docker-modem@5 effect-bash …)"
      )
    }))
})
