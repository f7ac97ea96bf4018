/**
 * Output collection with real processes: budgets, tails, spill files and their lifetime.
 */
import * as FileSystem from "@effect/platform/FileSystem"
import { SystemError } from "@effect/platform/Error"
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import * as NodePath from "@effect/platform-node/NodePath"
import { describe, expect, it } from "@effect/vitest"
import { Context, Effect, Exit, Layer, Scope } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import * as LocalBashExecutor from "../../src/layers/LocalBashExecutor.js"
import * as NodeProcessSpawner from "../../src/layers/NodeProcessSpawner.js"
import { BashExecutor } from "../../src/services/BashExecutor.js"

const run = (request: BashExecutor.Request) =>
  Effect.gen(function*() {
    const bash = yield* BashExecutor
    return yield* bash.run(yield* bash.resolve(request))
  })

const privateParent = () => fs.mkdtempSync(path.join(os.tmpdir(), "effect-bash-test-"))

/** Builds the executor in its own scope so a test can close it and look at what is left. */
const withExecutor = <A, E>(
  config: LocalBashExecutor.Settings.Input,
  body: (bash: BashExecutor["Type"]) => Effect.Effect<A, E>,
  layer: (config: LocalBashExecutor.Settings.Input) => Layer.Layer<BashExecutor, unknown> = LocalBashExecutor.layer
) =>
  Effect.gen(function*() {
    const scope = yield* Scope.make()
    const context = yield* Layer.buildWithScope(layer(config), scope)
    const bash = Context.get(context, BashExecutor)
    return yield* body(bash).pipe(Effect.ensuring(Scope.close(scope, Exit.void)))
  })

/** Every file under `dir`, recursively (relative paths). */
const filesUnder = (dir: string): ReadonlyArray<string> =>
  (fs.readdirSync(dir, { recursive: true, withFileTypes: true }) as Array<fs.Dirent>)
    .filter((entry) => entry.isFile())
    .map((entry) => path.relative(dir, path.join(entry.parentPath, entry.name)))

/**
 * Runs `command` with a 10-byte budget on an executor whose spill files go through `fileSystem`, and
 * reports the files left in the spill parent while the layer is still open.
 */
const runOver = (fileSystem: Layer.Layer<FileSystem.FileSystem>, command: string, spillParent: string) =>
  withExecutor(
    { maxOutputBytes: 10, spillParent, keepSpillFiles: true },
    (bash) =>
      Effect.flatMap(bash.resolve({ command }), bash.run).pipe(
        Effect.map((result) => ({ result, leftFiles: filesUnder(spillParent) }))
      ),
    (config) =>
      LocalBashExecutor.layerWith(config).pipe(
        Layer.provide(Layer.mergeAll(NodeProcessSpawner.layer, fileSystem, NodePath.layer))
      )
  )

describe("output budgets", () => {
  it.live("output exactly at the budget is not truncated; one byte over is", () =>
    Effect.gen(function*() {
      const exact = yield* run({ command: "printf '%0100d' 0", stdoutMaxBytes: 100 })
      expect(exact.stdout).toEqual({ text: "0".repeat(100), truncated: false })
      const over = yield* run({ command: "printf '1%0100d' 0", stdoutMaxBytes: 100 })
      expect(over.stdout.truncated).toBe(true)
      expect(over.stdout.text).toBe("0".repeat(100))
      expect(fs.readFileSync(over.stdout.spillPath!, "utf8")).toBe(`1${"0".repeat(100)}`)
    }).pipe(Effect.provide(LocalBashExecutor.layer())))

  it.live("the tail cut never splits a multibyte character", () =>
    Effect.gen(function*() {
      // "a" + four "é" (2 bytes each) = 9 bytes; the last 5 bytes start inside an "é".
      const result = yield* run({ command: "printf 'a\\xc3\\xa9\\xc3\\xa9\\xc3\\xa9\\xc3\\xa9'", stdoutMaxBytes: 5 })
      expect(result.stdout).toMatchObject({ text: "éé", truncated: true })
    }).pipe(Effect.provide(LocalBashExecutor.layer())))

  it.live("binary and invalid UTF-8 become U+FFFD, never a crash", () =>
    Effect.gen(function*() {
      const result = yield* run({ command: "printf 'ok\\xff\\xfe\\x00end'" })
      expect(result.stdout.text).toBe("ok\uFFFD\uFFFD\u0000end")
      const stderr = yield* run({ command: "head -c 3000 /dev/urandom >&2" })
      expect(stderr.stderr.truncated).toBe(false)
      expect(typeof stderr.stderr.text).toBe("string")
    }).pipe(Effect.provide(LocalBashExecutor.layer())))

  it.live("stderr has its own budget (maxOutputBytes) and spill file", () =>
    Effect.gen(function*() {
      const result = yield* run({ command: "printf 'x%.0s' $(seq 1 150) >&2; echo out", stdoutMaxBytes: 10 })
      expect(result.stdout).toEqual({ text: "out\n", truncated: false })
      expect(result.stderr).toMatchObject({ text: "x".repeat(100), truncated: true })
      expect(fs.readFileSync(result.stderr.spillPath!, "utf8")).toBe("x".repeat(150))
    }).pipe(Effect.provide(LocalBashExecutor.layer({ maxOutputBytes: 100 }))))

  it.live("1 GiB of output keeps the tail and drops the spill file past maxSpillBytes", () =>
    Effect.gen(function*() {
      const parent = privateParent()
      const result = yield* withExecutor({ spillParent: parent, maxSpillBytes: 8 * 1024 * 1024 }, (bash) =>
        Effect.gen(function*() {
          const outcome = yield* bash.run(yield* bash.resolve({ command: "head -c 1073741824 /dev/zero; echo; echo end" }))
          // The abandoned spill file is gone while the layer is still open.
          const [spillDir] = fs.readdirSync(parent)
          expect(fs.readdirSync(path.join(parent, spillDir!))).toEqual([])
          return outcome
        }))
      expect(result.exitCode).toBe(0)
      expect(result.stdout.truncated).toBe(true)
      expect(result.stdout.spillPath).toBeUndefined()
      expect(result.stdout.text.length).toBe(64_000)
      expect(result.stdout.text).toMatch(/\u0000\nend\n$/)
      fs.rmSync(parent, { recursive: true })
    }), { timeout: 120_000 })

  it.live("spill files are 0600 in a private 0700 directory removed when the layer closes", () =>
    Effect.gen(function*() {
      const parent = privateParent()
      const spillPath = yield* withExecutor({ spillParent: parent, maxOutputBytes: 10 }, (bash) =>
        Effect.gen(function*() {
          const result = yield* bash.run(yield* bash.resolve({ command: "seq 1 100" }))
          const file = result.stdout.spillPath!
          expect(fs.statSync(file).mode & 0o777).toBe(0o600)
          expect(fs.statSync(path.dirname(file)).mode & 0o777).toBe(0o700)
          expect(fs.readFileSync(file, "utf8").split("\n").length).toBe(101)
          return file
        }))
      expect(fs.existsSync(spillPath)).toBe(false)
      expect(fs.readdirSync(parent)).toEqual([])
      fs.rmSync(parent, { recursive: true })
    }))

  it.live("keepSpillFiles keeps the directory after the layer closes", () =>
    Effect.gen(function*() {
      const parent = privateParent()
      const spillPath = yield* withExecutor({ spillParent: parent, maxOutputBytes: 10, keepSpillFiles: true }, (bash) =>
        Effect.map(Effect.flatMap(bash.resolve({ command: "seq 1 100" }), bash.run), (result) => result.stdout.spillPath!))
      expect(fs.existsSync(spillPath)).toBe(true)
      fs.rmSync(parent, { recursive: true })
    }))

  it.live("no spill directory is created when nothing overflows", () =>
    Effect.gen(function*() {
      const parent = privateParent()
      yield* withExecutor({ spillParent: parent, keepSpillFiles: true }, (bash) =>
        Effect.flatMap(bash.resolve({ command: "echo small" }), bash.run))
      expect(fs.readdirSync(parent)).toEqual([])
      fs.rmSync(parent, { recursive: true })
    }))

  it.live("a spill file whose close fails is not advertised and is removed; the tail is still returned", () =>
    Effect.gen(function*() {
      const parent = privateParent()
      const { leftFiles, result } = yield* runOver(failingSyncFileSystem, "seq 1 100", parent)
      expect(result.stdout).toEqual({ text: "98\n99\n100\n", truncated: true })
      expect(leftFiles).toEqual([])
      fs.rmSync(parent, { recursive: true })
    }))

  it.live("a spill write failure (disk full) drops the spill file; the tail is still returned", () =>
    Effect.gen(function*() {
      const parent = privateParent()
      const { leftFiles, result } = yield* runOver(diskFullFileSystem, "seq 1 100000", parent)
      expect(result.exitCode).toBe(0)
      expect(result.stdout).toEqual({ text: "\n99999\n100000\n".slice(-10), truncated: true })
      expect(leftFiles).toEqual([])
      fs.rmSync(parent, { recursive: true })
    }))

  it.live("maxSpillTotalBytes: the oldest finished spill files make room for newer ones", () =>
    Effect.gen(function*() {
      const parent = privateParent()
      yield* withExecutor({ spillParent: parent, maxOutputBytes: 10, maxSpillTotalBytes: 1000 }, (bash) =>
        Effect.gen(function*() {
          const spill = (command: string) =>
            Effect.map(Effect.flatMap(bash.resolve({ command }), bash.run), (result) => result.stdout.spillPath!)
          const first = yield* spill("seq 1 200") // 692 bytes
          expect(fs.statSync(first).size).toBe(692)
          const second = yield* spill("seq 201 400") // 800 bytes: 692 + 800 > 1000, the first goes
          const third = yield* spill("seq 1 50") // 141 bytes: 800 + 141 fits, nothing goes
          expect([first, second, third].map((file) => fs.existsSync(file))).toEqual([false, true, true])
          expect(fs.readFileSync(second, "utf8")).toBe(Array.from({ length: 200 }, (_, i) => `${i + 201}\n`).join(""))
          expect(filesUnder(parent).length).toBe(2)
        }))
      fs.rmSync(parent, { recursive: true })
    }))

  it.live("maxSpillTotalBytes never removes a file still being written; a stream that cannot fit keeps its tail", () =>
    Effect.gen(function*() {
      const parent = privateParent()
      yield* withExecutor({ spillParent: parent, maxOutputBytes: 10, maxSpillTotalBytes: 1000 }, (bash) =>
        Effect.gen(function*() {
          // A background task holds a 692-byte spill file open while it runs.
          const task = yield* bash.start(yield* bash.resolve({ command: "seq 1 200; exec sleep 30" }))
          let held: string | undefined
          for (let attempt = 0; attempt < 500; attempt++) {
            held = (yield* task.readOutput).stdoutSpillPath
            if (held !== undefined && fs.statSync(held).size === 692) break
            yield* Effect.sleep(10)
          }
          expect(fs.statSync(held!).size).toBe(692)
          // 692 (being written) + 800 > 1000: this call spills nothing and still answers with its tail.
          const refused = yield* bash.run(yield* bash.resolve({ command: "seq 201 400" }))
          expect(refused.stdout).toEqual({ text: "8\n399\n400\n", truncated: true })
          expect(filesUnder(parent)).toEqual([path.relative(parent, held!)])
          expect(fs.statSync(held!).size).toBe(692)
          expect((yield* task.readOutput).stdoutSpillPath).toBe(held)
          // Once the task has finished, its file is the oldest finished one: it makes room.
          yield* task.kill
          yield* task.done
          expect((yield* task.readOutput).stdoutSpillPath).toBe(held)
          const admitted = yield* bash.run(yield* bash.resolve({ command: "seq 201 400" }))
          expect(fs.statSync(admitted.stdout.spillPath!).size).toBe(800)
          expect(fs.existsSync(held!)).toBe(false)
          expect((yield* task.readOutput).stdoutSpillPath).toBeUndefined()
        }))
      fs.rmSync(parent, { recursive: true })
    }))

  it.live("background reads are consuming and report loss once output outran memory", () =>
    Effect.gen(function*() {
      const bash = yield* BashExecutor
      const handle = yield* bash.start(yield* bash.resolve({ command: "seq 1 5; seq 1 1000 >&2", stdoutMaxBytes: 100 }))
      yield* handle.done
      const first = yield* handle.readOutput
      expect(first.lossy).toBe(true)
      expect(first.delta).toMatch(/^1\n2\n3\n4\n5\n\[stderr\]\n/)
      expect(first.delta).toMatch(/\n999\n1000\n$/)
      expect(first.stderrSpillPath).toBeDefined()
      expect(yield* handle.readOutput).toMatchObject({ delta: "", lossy: false })
    }).pipe(Effect.provide(LocalBashExecutor.layer({ maxOutputBytes: 100 }))))
})

/** The real file system, except that `sync` (the delayed write-back check) fails on spill files. */
const failingSyncFileSystem = Layer.effect(
  FileSystem.FileSystem,
  Effect.map(FileSystem.FileSystem, (real) => ({
    ...real,
    open: (file: string, options?: FileSystem.OpenFileOptions) =>
      Effect.map(real.open(file, options), (handle) =>
        Object.defineProperty(Object.create(handle), "sync", {
          get: () =>
            Effect.fail(new SystemError({ reason: "Unknown", module: "FileSystem", method: "sync", description: "EIO" }))
        }) as FileSystem.File)
  }))
).pipe(Layer.provide(NodeFileSystem.layer))

/** The real file system, except that spill files are `/dev/full`: every write fails with ENOSPC. */
const diskFullFileSystem = Layer.effect(
  FileSystem.FileSystem,
  Effect.map(FileSystem.FileSystem, (real) => ({
    ...real,
    open: (_file: string, _options?: FileSystem.OpenFileOptions) => real.open("/dev/full", { flag: "w" })
  }))
).pipe(Layer.provide(NodeFileSystem.layer))
