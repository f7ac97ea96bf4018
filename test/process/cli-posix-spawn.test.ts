/**
 * The bundled command and koffi, the optional native module behind the spawner's `posix_spawn`: the
 * bundle leaves it external (see cli-loading.test.ts), so the command finds it in the package's
 * `node_modules` when it loads it; `mcp` does, for its many spawns, and `run` never does.
 */
import { describe, expect, it } from "@effect/vitest"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js"
import { Effect } from "effect"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { cleanEnv, cliPath, runCli } from "../support/cli.js"

/** Prints the command's parent, then how many of its parent's memory mappings are koffi's. */
const koffiOfParent = "echo $PPID; grep -c koffi /proc/$PPID/maps"

describe("the bundled command's posix_spawn", () => {
  it.scopedLive("mcp loads koffi's native module, and its commands are its own children", () =>
    Effect.gen(function*() {
      const workdir = mkdtempSync(join(tmpdir(), "effect-bash-koffi-"))
      yield* Effect.addFinalizer(() => Effect.sync(() => rmSync(workdir, { recursive: true, force: true })))
      const { client, server } = yield* Effect.acquireRelease(
        Effect.promise(async () => {
          const transport = new StdioClientTransport({
            command: process.execPath,
            args: [cliPath, "mcp", "--workdir", workdir],
            env: cleanEnv(),
            stderr: "ignore"
          })
          const client = new Client({ name: "cli-posix-spawn-test", version: "0.0.0" })
          await client.connect(transport)
          return { client, server: transport.pid }
        }),
        ({ client }) => Effect.promise(() => client.close())
      )
      const result = yield* Effect.promise(() =>
        client.callTool({ name: "bash", arguments: { command: koffiOfParent, description: "koffi" } })
      )
      const text = (result.content as Array<{ readonly text: string }>).map((part) => part.text).join("")
      const [parent, mappings] = text.trim().split("\n").map(Number)
      expect(parent).toBe(server)
      expect(mappings).toBeGreaterThan(0)
    }))

  it.live("run spawns its one command by child_process and never loads koffi", () =>
    Effect.gen(function*() {
      const outcome = yield* Effect.promise(() => runCli(["run", "--", koffiOfParent], { env: cleanEnv() }))
      const [parent, mappings] = outcome.stdout.trim().split("\n").map(Number)
      expect(parent).toBeGreaterThan(0)
      expect(mappings).toBe(0)
    }))
})
