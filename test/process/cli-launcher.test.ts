/**
 * The bundled command's launcher: the spawner starts its program by path, next to the module that
 * starts it, which in the bundle is `dist/bin/`; the build emits it there as an entry point of its own.
 */
import { describe, expect, it } from "@effect/vitest"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js"
import { Effect } from "effect"
import { cpSync, mkdtempSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import { launcherEntryName } from "../../src/layers/internal/spawner/launcherEntry.js"
import { cleanEnv, cliPath } from "../support/cli.js"
import { processOf } from "../support/processes.js"

const root = join(dirname(fileURLToPath(import.meta.url)), "..", "..")

interface Metafile {
  readonly outputs: Record<string, {
    readonly inputs: Record<string, unknown>
    readonly imports: ReadonlyArray<{ readonly path: string; readonly kind: string; readonly external?: boolean }>
  }>
}

/** The output files `file` loads before it runs (its static imports, transitively). */
const staticClosure = (meta: Metafile, file: string, seen = new Set<string>()): Set<string> => {
  if (seen.has(file)) return seen
  seen.add(file)
  for (const imported of meta.outputs[file]!.imports) {
    if (imported.external !== true && imported.kind === "import-statement") staticClosure(meta, imported.path, seen)
  }
  return seen
}

describe("the bundled command's launcher", () => {
  it("is emitted beside the bundle, where the spawner looks for it, and loads no package", () => {
    const meta = JSON.parse(readFileSync(join(root, "dist", "bin.meta.json"), "utf8")) as Metafile
    const launcher = `dist/bin/${launcherEntryName}`
    expect(dirname(join(root, launcher))).toBe(dirname(cliPath))
    expect(Object.keys(meta.outputs)).toContain(launcher)
    const sources = [...staticClosure(meta, launcher)].flatMap((file) => Object.keys(meta.outputs[file]!.inputs))
    expect(sources).toContain("src/layers/internal/spawner/launcherMain.ts")
    expect(sources.filter((source) => source.includes("node_modules/"))).toEqual([])
  })

  it.scopedLive("mcp runs a command through it: the command's parent is the launcher, a child of the server", () =>
    Effect.gen(function*() {
      const { parent, server } = yield* echoParent(cliPath)
      // The launcher names itself; without its program the server would spawn the command itself.
      expect(parent).not.toBe(server)
      expect(processOf(parent)?.ppid).toBe(server)
      expect(readFileSync(`/proc/${parent}/cmdline`, "utf8").replace(/\0+$/, "")).toBe("effect-bash launcher")
    }))

  it.scopedLive("a bundle shipped without it still runs commands: the server spawns them, and warns naming the path", () =>
    Effect.gen(function*() {
      const copy = mkdtempSync(join(tmpdir(), "effect-bash-bundle-"))
      yield* Effect.addFinalizer(() => Effect.sync(() => rmSync(copy, { recursive: true, force: true })))
      cpSync(dirname(cliPath), copy, {
        recursive: true,
        filter: (source) => !source.endsWith(`/${launcherEntryName}`)
      })
      const { parent, server, stderr } = yield* echoParent(join(copy, "effect-bash.js"))
      expect(parent).toBe(server)
      expect(stderr()).toContain(`the launcher's program is missing at ${join(copy, launcherEntryName)}`)
    }))
})

/** Connects the official client to `mcp` of the bundle at `bin`, runs `echo hi`, and reports its parent. */
const echoParent = (bin: string) =>
  Effect.gen(function*() {
    const workdir = mkdtempSync(join(tmpdir(), "effect-bash-launcher-"))
    yield* Effect.addFinalizer(() => Effect.sync(() => rmSync(workdir, { recursive: true, force: true })))
    let stderr = ""
    const { client, server } = yield* Effect.acquireRelease(
      Effect.promise(async () => {
        const transport = new StdioClientTransport({
          command: process.execPath,
          args: [bin, "mcp", "--workdir", workdir],
          env: cleanEnv(),
          stderr: "pipe"
        })
        transport.stderr?.on("data", (chunk: Buffer) => {
          stderr += chunk.toString("utf8")
        })
        const client = new Client({ name: "cli-launcher-test", version: "0.0.0" })
        await client.connect(transport)
        return { client, server: transport.pid }
      }),
      ({ client }) => Effect.promise(() => client.close())
    )
    const result = yield* Effect.promise(() =>
      client.callTool({ name: "bash", arguments: { command: "echo hi; echo parent=$PPID", description: "echo" } })
    )
    const text = (result.content as Array<{ readonly text: string }>).map((part) => part.text).join("")
    expect(result.isError).not.toBe(true)
    expect(text).toContain("hi\n")
    return { parent: Number(/parent=(\d+)/.exec(text)?.[1]), server, stderr: () => stderr }
  })
