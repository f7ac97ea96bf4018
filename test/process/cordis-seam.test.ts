/**
 * `ctx.bash` as a drop-in for the reference seam: a plugin written the reference's way — synchronous
 * `resolve`/`start`/`ownerOf`/`readOutput`/`kill`, `await done`, `run(resolve(...))` — runs against ours
 * inside the harness fork (its types: test/types/cordis-context-augmented.test-d.ts); and the
 * augmentation of upstream `cordis` type-checks (under `moduleResolution: "bundler"`, where upstream's
 * `.d.ts` resolve).
 */
import { execFile } from "node:child_process"
import { join } from "node:path"
import { Context } from "@deepseek-ai/cordis"
import { Effect, Layer, ManagedRuntime } from "effect"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import type {} from "../../src/cordis/augment-deepseek.js"
import EffectBash, { RunnerClosedError, SynchronousCallError } from "../../src/cordis-adapter.js"
import { makeCallRunner } from "../../src/cordis/CallRunner.js"
import { eventually, readPid, tempDir } from "../support/cordis.js"
import { liveMembers } from "../support/processes.js"
import { bwrapUsable } from "../support/bwrap.js"

let root: Context
let dir: ReturnType<typeof tempDir>
/** The context of a plugin that injects `bash`, as the reference's plugins do. */
let plugin: Context

beforeEach(async () => {
  root = new Context()
  dir = tempDir("effect-bash-seam-")
  await root.plugin(EffectBash, { graceMs: 300, spillParent: dir.path })
  await root.plugin({
    name: "reference-style",
    inject: ["bash", "bashEnv", "tasks"],
    apply: (ctx: Context) => {
      plugin = ctx
    }
  })
})
afterEach(async () => {
  await root.fiber.dispose()
  dir.remove()
})

describe.skipIf(!bwrapUsable)("ctx.bash under a sandbox, the reference's way", () => {
  it("starts synchronously right after the plugin loaded (the runner's probe is done by then)", async () => {
    const sandboxed = new Context()
    const home = tempDir("effect-bash-seam-sandbox-")
    try {
      await sandboxed.plugin(EffectBash, { graceMs: 300, spillParent: home.path, sandbox: { mode: "read-only" } })
      const bash = sandboxed.get("bash")!
      const process = bash.start(bash.resolve({ command: "echo confined > file.txt", workdir: home.path }))
      await process.done
      expect(process.status).toBe("completed")
      expect(process.exitCode).toBe(1)
      expect(process.readOutput().delta).toContain("Read-only file system")
    } finally {
      await sandboxed.fiber.dispose()
      home.remove()
    }
  })
})

describe("ctx.bash, the reference's way", () => {
  it("runs ctx.bash.run(ctx.bash.resolve({...}))", async () => {
    const spec = plugin.bash.resolve({ command: "echo hi; echo oops >&2; exit 4", timeoutMs: 5_000 })
    expect(spec).toMatchObject({ command: "echo hi; echo oops >&2; exit 4", timeoutMs: 5_000, stdoutMaxBytes: 64_000 })
    expect(await plugin.bash.run(spec)).toMatchObject({
      exitCode: 4,
      signal: null,
      timedOut: false,
      aborted: false,
      stdout: { text: "hi\n", truncated: false },
      stderr: { text: "oops\n", truncated: false }
    })
  })

  it("throws the field's error from resolve at once", () => {
    expect(() => plugin.bash.resolve({ command: "echo", timeoutMs: -1 })).toThrow(
      "invalid timeoutMs: expected a positive finite number, got -1"
    )
  })

  it("checks a spec built or changed by hand as resolve does: run rejects and start throws naming the field", async () => {
    const handBuilt = { command: "true", workdir: dir.path, timeoutMs: 10_000, stdoutMaxBytes: 64_000 }
    await expect(plugin.bash.run({ ...handBuilt, command: "echo a\0b" })).rejects.toMatchObject({
      _tag: "BashRequestError",
      field: "command",
      message: "invalid command: expected a string without NUL bytes"
    })
    await expect(plugin.bash.run({ ...handBuilt, workdir: `/${"w".repeat(4096)}` })).rejects.toMatchObject({ field: "workdir" })
    const mutated = { ...plugin.bash.resolve({ command: "true" }), timeoutMs: -1 }
    await expect(plugin.bash.run(mutated)).rejects.toThrow("invalid timeoutMs: expected a positive finite number, got -1")
    await expect(plugin.bash.run({ ...handBuilt, stdoutMaxBytes: 0 })).rejects.toThrow(
      "invalid stdoutMaxBytes: expected a positive finite number, got 0"
    )
    await expect(plugin.bash.run({ ...handBuilt, env: { DSH_HOME: "/x" } })).rejects.toThrow(
      "ordinary bash env cannot set reserved variable \"DSH_HOME\"; use dshEnv"
    )
    expect(() => plugin.bash.start({ ...handBuilt, workdir: "/tmp\0" })).toThrow(
      expect.objectContaining({ _tag: "BashRequestError", field: "workdir" })
    )
    expect((await plugin.bash.run({ ...handBuilt, command: "echo by hand" })).stdout.text).toBe("by hand\n")
  })

  it("starts with ctx.bash.start(ctx.bash.resolve(...)): live status, synchronous reads and kill, await done", async () => {
    const pidFile = join(dir.path, "bg.pid")
    const process = plugin.bash.start(
      plugin.bash.resolve({ command: `echo $$ > ${pidFile}; echo started; exec sleep 30`, owner: "s1" })
    )
    expect(process).toMatchObject({ status: "running", exitCode: null, signal: null, owner: "s1" })
    expect(plugin.bash.ownerOf(process.id)).toBe("s1")
    const pgid = await readPid(pidFile)
    const first = await eventually(() => {
      const read = process.readOutput()
      return read.delta === "" ? undefined : read
    })
    expect(first).toEqual({ delta: "started\n", lossy: false })
    expect(process.readOutput()).toEqual({ delta: "", lossy: false })
    expect(process.kill()).toBe(true)
    expect(process.status).toBe("running")
    expect(await process.done).toBeUndefined()
    expect(process).toMatchObject({ status: "killed", exitCode: null, signal: "SIGTERM" })
    expect(process.kill()).toBe(false)
    expect(liveMembers(pgid)).toEqual([])
  })

  it("returns the handle at once when the spawn fails, and settles it as killed with `spawn failed: …`", async () => {
    const missing = join(dir.path, "missing")
    const process = plugin.bash.start(plugin.bash.resolve({ command: "echo never", workdir: missing }))
    await process.done
    expect(process).toMatchObject({ status: "killed", exitCode: null, signal: null })
    expect(process.readOutput()).toEqual({
      delta: `[stderr]\nspawn failed: workdir does not exist: ${missing} (ENOENT)\n`,
      lossy: false
    })
  })

  it("answers ctx.bashEnv.list() at once", () => {
    expect(plugin.bashEnv.list().map((declaration) => declaration.key)).toEqual(["DSH_SESSION_JSONL"])
  })

  it("after the unload: seam calls throw RunnerClosedError, a handle still reads its final state", async () => {
    const bash = plugin.bash
    const process = bash.start(bash.resolve({ command: "printf last; exec sleep 30" }))
    await eventually(() => (process.readOutput().delta === "last" ? true : undefined))
    await root.fiber.dispose()
    expect(() => bash.resolve({ command: "echo" })).toThrow(RunnerClosedError)
    expect(() => bash.ownerOf(process.id)).toThrow(RunnerClosedError)
    expect(process.status).toBe("killed")
    expect(process.kill()).toBe(false)
    expect(process.readOutput()).toEqual({ delta: "", lossy: false })
  })
})

describe("the runner behind the synchronous calls", () => {
  it("refuses an effect that would wait, and stops it; after shutdown only reads still run", async () => {
    const runner = await makeCallRunner(ManagedRuntime.make(Layer.empty))
    let interrupted = false
    const waits = Effect.never.pipe(Effect.onInterrupt(() => Effect.sync(() => (interrupted = true))))
    expect(() => runner.runSync(waits)).toThrow(SynchronousCallError)
    await eventually(() => (interrupted ? true : undefined))
    expect(runner.runSync(Effect.succeed(1))).toBe(1)
    await runner.shutdown()
    expect(() => runner.runSync(Effect.succeed(1))).toThrow(RunnerClosedError)
    expect(runner.readSync(Effect.succeed(2))).toBe(2)
  })
})

describe("the augmentation of upstream cordis", () => {
  /**
   * Type-checks a source as a file of this package's test folder under `moduleResolution: "bundler"`,
   * against the declarations the package ships (`dist/`, built before the process tests run), the
   * augmentation included; in a process of its own, so the compiler's memory does not stay in this one.
   * Also tells, for each `ctx.<member>` the source reads, which files declare it.
   */
  const typeCheck = (source: string): Promise<{
    readonly diagnostics: ReadonlyArray<string>
    readonly declaredIn: Readonly<Record<string, ReadonlyArray<string>>>
  }> =>
    new Promise((resolve, reject) => {
      const checker = join(import.meta.dirname, "..", "support", "fixtures", "check-types.mjs")
      const file = join(import.meta.dirname, "upstream-cordis-types.ts")
      const child = execFile(
        process.execPath,
        [checker, file, "/augment-cordis.d.ts"],
        { cwd: join(import.meta.dirname, "..", ".."), timeout: 200_000, killSignal: "SIGKILL", maxBuffer: 16 * 1024 * 1024 },
        (error, stdout, stderr) => error === null ? resolve(JSON.parse(stdout)) : reject(new Error(`${error.message}\n${stderr}`))
      )
      child.stdin!.end(source)
    })

  const usage = `
import type {} from "../../dist/src/cordis/augment-cordis.js"
import { Context } from "cordis"
import EffectBash from "../../dist/src/cordis-adapter.js"
import type { BashExecutor } from "../../dist/src/services/BashExecutor.js"
const ctx = new Context()
await ctx.plugin(EffectBash, { timeoutMs: 60_000 })
const spec: BashExecutor.Spec = ctx.bash.resolve({ command: "echo hi" })
const found = ctx.get("bash")?.ownerOf("proc-1")
const listed = ctx.bashEnv.list().length
export { spec, found, listed }
`

  it("types ctx.bash, ctx.bashEnv and ctx.get(\"bash\"), and ctx.plugin(EffectBash) type-checks", async () => {
    const { declaredIn, diagnostics } = await typeCheck(usage)
    expect(diagnostics).toEqual([])
    // The augmentation alone declares the members: without it, the same file would not compile.
    const augmentation = [expect.stringMatching(/\/dist\/src\/cordis\/augment-cordis\.d\.ts$/)]
    expect(declaredIn.bash).toEqual(augmentation)
    expect(declaredIn.bashEnv).toEqual(augmentation)
    expect(declaredIn.plugin).toEqual([expect.stringContaining("/node_modules/cordis/")])
  }, 240_000)
})
