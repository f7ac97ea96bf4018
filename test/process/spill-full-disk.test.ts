/**
 * A full disk under the spill directory: a real tmpfs far smaller than the output. The call still
 * answers with its tail, the spill path is withheld and no partial file is left behind.
 *
 * Mounting needs root (CI runs as root); elsewhere the suite is skipped with the reason.
 */
import { describe, expect, it } from "@effect/vitest"
import { Context, Effect, Exit, Layer, Scope } from "effect"
import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import * as LocalBashExecutor from "../../src/layers/LocalBashExecutor.js"
import { BashExecutor } from "../../src/services/BashExecutor.js"

const mountTmpfs = (dir: string, size: string) =>
  execFileSync("mount", ["-t", "tmpfs", "-o", `size=${size},mode=0700`, "tmpfs", dir], { stdio: "pipe" })

/** Why a tmpfs cannot be mounted here, or `undefined` when it can. */
const cannotMount = ((): string | undefined => {
  if (process.platform !== "linux") return "not Linux"
  if (process.getuid?.() !== 0) return "not root"
  const probe = fs.mkdtempSync(path.join(os.tmpdir(), "effect-bash-tmpfs-probe-"))
  try {
    mountTmpfs(probe, "64k")
    execFileSync("umount", [probe])
    return undefined
  } catch (error) {
    return `mount -t tmpfs failed: ${error instanceof Error ? error.message.split("\n")[0] : String(error)}`
  } finally {
    fs.rmdirSync(probe)
  }
})()

if (cannotMount !== undefined) {
  console.warn(`spill-full-disk: skipped, cannot mount a tmpfs (${cannotMount})`)
}

/** A fresh tmpfs of `size`, unmounted (and its mount point removed) when the scope closes. */
const smallTmpfs = (size: string) =>
  Effect.acquireRelease(
    Effect.sync(() => {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), "effect-bash-tmpfs-"))
      mountTmpfs(dir, size)
      return dir
    }),
    (dir) =>
      Effect.sync(() => {
        execFileSync("umount", [dir])
        fs.rmdirSync(dir)
      })
  )

const filesUnder = (dir: string): ReadonlyArray<string> =>
  (fs.readdirSync(dir, { recursive: true, withFileTypes: true }) as Array<fs.Dirent>)
    .filter((entry) => entry.isFile())
    .map((entry) => entry.name)

describe.skipIf(cannotMount !== undefined)("a full tmpfs under the spill directory", () => {
  it.live("the call answers with its tail, withholds the path and leaves no partial file", () =>
    Effect.scoped(
      Effect.gen(function*() {
        const mount = yield* smallTmpfs("256k")
        const layerScope = yield* Scope.make()
        const context = yield* Layer.buildWithScope(
          LocalBashExecutor.layer({ spillParent: mount, maxOutputBytes: 1000 }),
          layerScope
        )
        const bash = Context.get(context, BashExecutor)
        // 4 MB: sixteen times the file system, in both streams.
        const command = "head -c 4000000 /dev/zero | tr '\\0' x; echo; echo end; head -c 4000000 /dev/zero >&2; echo err >&2"
        const result = yield* bash.run(yield* bash.resolve({ command }))
        expect(result.exitCode).toBe(0)
        expect(result.stdout.truncated).toBe(true)
        expect(result.stdout.spillPath).toBeUndefined()
        expect(result.stdout.text).toBe(`${"x".repeat(995)}\nend\n`)
        expect(result.stderr.truncated).toBe(true)
        expect(result.stderr.spillPath).toBeUndefined()
        expect(result.stderr.text).toMatch(/\u0000err\n$/)
        // While the layer is still open: nothing partial stays behind, and the disk has room again.
        expect(filesUnder(mount)).toEqual([])
        const small = yield* bash.run(yield* bash.resolve({ command: "seq 1 1000" }))
        expect(small.stdout.spillPath).toBeDefined()
        expect(fs.readFileSync(small.stdout.spillPath!, "utf8").split("\n").length).toBe(1001)
        yield* Scope.close(layerScope, Exit.void)
        expect(fs.readdirSync(mount)).toEqual([])
      })
    ), { timeout: 30_000 })

  it.live("a write error that surfaces only when the file is closed leaves no partial file", () =>
    Effect.scoped(
      Effect.gen(function*() {
        // One page of disk; one 20 kB burst that the write-behind buffer accepts whole, so ENOSPC
        // comes back only when the file is flushed at the end of the stream.
        const mount = yield* smallTmpfs("4k")
        const context = yield* Layer.build(LocalBashExecutor.layer({ spillParent: mount, maxOutputBytes: 1000 }))
        const bash = Context.get(context, BashExecutor)
        const result = yield* bash.run(yield* bash.resolve({ command: "head -c 20000 /dev/zero | tr '\\0' y" }))
        expect(result.stdout).toEqual({ text: "y".repeat(1000), truncated: true })
        expect(filesUnder(mount)).toEqual([])
      })
    ))
})
