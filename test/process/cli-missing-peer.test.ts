/**
 * The bundled command run where `docker-modem` (an optional peer, not bundled) is not installed: a
 * copy of `dist/bin/` in a directory with no `node_modules` above it, as `npx effect-bash` installs
 * it. `--container-image` then cannot start, and an MCP client is told why, not just that the
 * connection closed.
 */
import { describe, expect, it } from "@effect/vitest"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js"
import { Deferred, Effect, Exit } from "effect"
import { cpSync, mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { cleanEnv, cliPath } from "../support/cli.js"

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
      // The command writes its code cache beside the bundle as it exits, so the copy is removed only
      // once the command has closed (the client's close does not wait for it after a failed connect).
      const closed = yield* Deferred.make<void>()
      transport.onclose = () => Deferred.unsafeDone(closed, Exit.void)
      const client = new Client({ name: "missing-peer-test", version: "0.0.0" })
      const failure = yield* Effect.flip(Effect.tryPromise(() => client.connect(transport)))
      yield* Effect.promise(() => client.close())
      yield* Deferred.await(closed).pipe(Effect.timeout("60 seconds"))
      expect(String(failure.cause)).toContain(
        "MCP error -32603: effect-bash: the container executor needs the docker-modem package: npm install docker-modem@5 " +
          "(the command through npx: npx -y -p effect-bash -p docker-modem@5 effect-bash …)"
      )
    }))
})
