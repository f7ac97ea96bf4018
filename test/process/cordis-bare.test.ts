/**
 * The adapter in a bare upstream Cordis 4 (no harness): `ctx.bash`, `ctx.bashEnv`, `ctx.tasks`,
 * disposal, duplicate providers, and reloads — with real processes, checked in /proc.
 */
import { existsSync, readdirSync } from "node:fs"
import { join } from "node:path"
import * as upstream from "cordis"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import EffectBash, { RunnerClosedError } from "../../src/cordis-adapter.js"
import type { CordisBash, CordisBashEnv, CordisContext, CordisTasks } from "../../src/cordis-adapter.js"
import { eventually, readPid, tempDir, termIgnoringCommand } from "../support/cordis.js"
import { liveMembers, liveMembersOf } from "../support/processes.js"

interface Fiber {
  readonly dispose: () => Promise<void>
  readonly restart: () => Promise<void>
}
interface Root extends CordisContext {
  readonly fiber: Fiber
  plugin(plugin: unknown, config?: unknown): PromiseLike<Fiber> & Fiber
}
// Upstream rc.10's own .d.ts does not resolve under `nodenext`; the host is typed structurally.
const { Context } = upstream as unknown as { readonly Context: new() => Root }

let root: Root
let dir: ReturnType<typeof tempDir>
const config = () => ({ graceMs: 300, spillParent: dir.path, maxOutputBytes: 1_000 })
const bash = () => root.get("bash") as CordisBash
const bashEnv = () => root.get("bashEnv") as CordisBashEnv
const tasks = () => root.get("tasks") as CordisTasks

beforeEach(() => {
  root = new Context()
  dir = tempDir("effect-bash-cordis-")
})
afterEach(async () => {
  // Unloads whatever a failed test left loaded (disposing the root fiber unloads its plugins).
  await root.fiber.dispose()
  dir.remove()
})

describe("in a bare upstream Cordis", () => {
  it("runs a command through ctx.bash", async () => {
    const fiber = await root.plugin(EffectBash, config())
    const result = await bash().run(bash().resolve({ command: "echo hi; echo oops >&2; exit 4" }))
    expect(result).toMatchObject({
      exitCode: 4,
      signal: null,
      timedOut: false,
      aborted: false,
      stdout: { text: "hi\n", truncated: false },
      stderr: { text: "oops\n", truncated: false }
    })
    expect(bash().sandboxMode).toBeUndefined()
    await fiber.dispose()
  })

  it("reports a timeout as a result", async () => {
    const fiber = await root.plugin(EffectBash, config())
    const result = await bash().run(bash().resolve({ command: "sleep 5", timeoutMs: 150 }))
    expect(result).toMatchObject({ timedOut: true, aborted: false, timeoutMs: 150, signal: "SIGTERM" })
    await fiber.dispose()
  })

  it("honours spec.signal: aborting kills the group and resolves with aborted: true", async () => {
    const fiber = await root.plugin(EffectBash, config())
    const abort = new AbortController()
    const pidFile = join(dir.path, "pid")
    const running = bash().run(bash().resolve({ command: `echo $$ > ${pidFile}; sleep 10`, signal: abort.signal }))
    const pgid = await readPid(pidFile)
    abort.abort()
    const result = await running
    expect(result).toMatchObject({ aborted: true, timedOut: false })
    expect(liveMembers(pgid)).toEqual([])
    await fiber.dispose()
  })

  it("rejects a pre-aborted spec with the contract message", async () => {
    const fiber = await root.plugin(EffectBash, config())
    const spec = bash().resolve({ command: "echo never", signal: AbortSignal.abort("stop") })
    await expect(bash().run(spec)).rejects.toThrow("aborted before spawn: stop")
    await fiber.dispose()
  })

  it("starts a background process, reads it incrementally and kills it", async () => {
    const fiber = await root.plugin(EffectBash, config())
    const process = bash().start(bash().resolve({ command: "echo started; sleep 30", owner: "s1" }))
    expect(process.status).toBe("running")
    expect(process.owner).toBe("s1")
    expect(bash().ownerOf(process.id)).toBe("s1")
    const first = await eventually(() => {
      const read = process.readOutput()
      return read.delta === "" ? undefined : read
    })
    expect(first).toMatchObject({ delta: "started\n", lossy: false })
    expect(process.readOutput().delta).toBe("")
    expect(process.kill()).toBe(true)
    expect(await process.done).toBeUndefined()
    expect(process).toMatchObject({ status: "killed", exitCode: null, signal: "SIGTERM" })
    expect(process.kill()).toBe(false)
    await fiber.dispose()
  })

  it("leaves no process and no spill file once `await fiber.dispose()` resolves, even with a TERM-ignoring child", async () => {
    const fiber = await root.plugin(EffectBash, config())
    const backgroundPid = join(dir.path, "bg.pid")
    const foregroundPid = join(dir.path, "fg.pid")
    const background = bash().start(bash().resolve({ command: termIgnoringCommand(backgroundPid) }))
    const foreground = bash().run(
      bash().resolve({ command: `head -c 5000 /dev/zero; ${termIgnoringCommand(foregroundPid)}` })
    ).then(() => undefined, (error: unknown) => error)
    const pgids = [await readPid(backgroundPid), await readPid(foregroundPid)]
    await eventually(() => (readdirSync(dir.path).some((name) => !name.endsWith(".pid")) ? true : undefined))
    expect(liveMembersOf(pgids)).not.toEqual([])

    const disposing = Date.now()
    await fiber.dispose()

    // Bounded by the 300 ms grace (TERM → KILL), not by the 30 s the TERM-ignoring children would run.
    expect(Date.now() - disposing).toBeLessThan(10_000)
    expect(liveMembersOf(pgids)).toEqual([])
    expect(readdirSync(dir.path).filter((name) => !name.endsWith(".pid"))).toEqual([])
    await background.done
    expect(background.status).toBe("killed")
    // The call in flight was cut short by the unload.
    const cutShort = await foreground
    expect(cutShort).toBeInstanceOf(RunnerClosedError)
    expect(cutShort).toMatchObject({ message: "effect-bash: the plugin has been unloaded" })
  })

  it("takes the executor's bwrapPath for contain: a bubblewrap that cannot start fails the load, naming it", async () => {
    const missing = join(dir.path, "no-bwrap")
    const loading = root.plugin(EffectBash, { ...config(), contain: true, bwrapPath: missing, directSpawn: true })
    await expect(loading).rejects.toThrow(`contain needs bubblewrap, but ${JSON.stringify(missing)} cannot start`)
    await loading.dispose()
  })

  it("refuses a second executor in the same scope with Cordis's duplicate-service error", async () => {
    const first = await root.plugin(EffectBash, config())
    const second = root.plugin(EffectBash, config())
    await expect(second).rejects.toThrow(`service "bash" has been registered at <effect-bash>`)
    await second.dispose()
    // The first instance is untouched.
    expect((await bash().run(bash().resolve({ command: "echo still here" }))).stdout.text).toBe("still here\n")
    await first.dispose()
  })

  it("removes a child plugin's env registrations when the child unloads", async () => {
    const fiber = await root.plugin(EffectBash, config())
    const child = await root.plugin({
      name: "contributor",
      inject: ["bashEnv"],
      apply: (ctx: CordisContext) => {
        const env = ctx.get("bashEnv") as CordisBashEnv
        env.register({
          name: "greeter",
          keys: [{ key: "DSH_GREETING", description: "A greeting" }],
          resolve: async (execution) => ({ DSH_GREETING: `hello ${execution.session?.id ?? "nobody"}` })
        })
      }
    })
    const execution = { callId: "c1", toolName: "bash", session: { id: "s1" } }
    expect(bashEnv().list()).toContainEqual({ key: "DSH_GREETING", contributor: "greeter", description: "A greeting" })
    expect((await bashEnv().collect(execution))["DSH_GREETING"]).toBe("hello s1")

    await child.dispose()

    expect((bashEnv().list()).map(({ key }) => key)).not.toContain("DSH_GREETING")
    expect(await bashEnv().collect(execution)).not.toHaveProperty("DSH_GREETING")
    await fiber.dispose()
  })

  it("throws the contract error for a bad registration", async () => {
    const fiber = await root.plugin(EffectBash, config())
    expect(() =>
      bashEnv().register({ name: "bad", keys: [{ key: "DSH_HOME", description: "mine" }], resolve: () => ({}) })
    ).toThrow(`bash env contributor "bad" cannot own reserved key "DSH_HOME"`)
    await fiber.dispose()
  })

  it("leaves no orphan when reloaded while a background task runs", async () => {
    const fiber = await root.plugin(EffectBash, config())
    const pidFile = join(dir.path, "task.pid")
    const task = await tasks().start({ kind: "bash", label: "sleeper", owner: "s1" }, async () => {
      const process = bash().start(bash().resolve({ command: termIgnoringCommand(pidFile) }))
      return {
        read: () => process.readOutput().delta,
        cancel: () => {
          process.kill()
        },
        done: process.done.then(() => ({ status: process.status === "completed" ? "completed" : "killed" }))
      }
    })
    expect(task).toMatchObject({ id: "bash-1", status: "running" })
    const pgid = await readPid(pidFile)
    expect(liveMembers(pgid)).not.toEqual([])

    const restarting = Date.now()
    await fiber.restart()

    expect(Date.now() - restarting).toBeLessThan(10_000)
    expect(liveMembers(pgid)).toEqual([])
    // A fresh instance: its task ids start over and it runs commands.
    expect(await tasks().list("s1")).toEqual([])
    expect((await bash().run(bash().resolve({ command: "echo again" }))).stdout.text).toBe("again\n")
    await fiber.dispose()
    expect(existsSync(dir.path)).toBe(true)
  })
})
