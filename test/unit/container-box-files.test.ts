/**
 * The box file service on a fake engine: a file written reads back, a tree uploaded downloads back
 * byte for byte, and each failure is its tagged error naming the path (missing, too large, not a
 * file, a missing directory). No engine, no processes.
 */
import { afterAll, describe, expect, it } from "@effect/vitest"
import { Context, Effect, Layer } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import * as DockerBashExecutor from "../../src/layers/DockerBashExecutor.js"
import { BoxFiles } from "../../src/services/BoxFiles.js"
import * as FakeContainerEngine from "../../src/testing/FakeContainerEngine.js"
import { tempDirs } from "../support/tempDirs.js"

const dirs = tempDirs("effect-bash-box-files")
afterAll(dirs.removeAll)

/** The service on a fake engine whose boxes have a `volume` workspace at `workspace`. */
const workspace = "/work/project"
const filesOnFake = Effect.gen(function*() {
  const fake = yield* Layer.build(FakeContainerEngine.layer(() => ({ onTerm: "obey" })))
  const layer = DockerBashExecutor.layerWithEngine({ image: "fake", cwd: workspace, workspace: "volume" })
  const context = yield* Layer.build(Layer.provide(layer, Layer.succeedContext(fake)))
  return { files: Context.get(context, BoxFiles), control: Context.get(fake, FakeContainerEngine.FakeContainerEngineControl) }
})

describe("BoxFiles on a fake engine", () => {
  it.scoped("a file written into the session's box reads back, relative to the workspace; another session has its own box", () =>
    Effect.gen(function*() {
      const { control, files } = yield* filesOnFake
      yield* files.writeFile("notes.txt", "written\n", { session: "s1" })
      expect(Buffer.from(yield* files.readFile(`${workspace}/notes.txt`, { session: "s1" })).toString()).toBe("written\n")
      // Another session has a box of its own, without that file.
      const missing = yield* Effect.flip(files.readFile("notes.txt", { session: "s2" }))
      expect(missing).toMatchObject({ _tag: "BoxFileNotFound", path: `${workspace}/notes.txt` })
      expect(missing.message).toBe(`${workspace}/notes.txt: no such file or directory in the box`)
      expect((yield* control.boxes).map((box) => box.options.labels["effect-bash.session"])).toEqual(["s1", "s2"])
    }))

  it.scoped("a read larger than its cap fails naming the path and the cap; a write larger than it writes nothing", () =>
    Effect.gen(function*() {
      const { files } = yield* filesOnFake
      yield* files.writeFile("big", new Uint8Array(5000))
      const tooLarge = yield* Effect.flip(files.readFile("big", { maxBytes: 4999 }))
      expect(tooLarge).toMatchObject({ _tag: "BoxFileTooLarge", path: `${workspace}/big`, maxBytes: 4999 })
      expect(tooLarge.message).toBe(`${workspace}/big: larger than 4999 bytes`)
      expect((yield* files.readFile("big", { maxBytes: 5000 })).length).toBe(5000)
      const refused = yield* Effect.flip(files.writeFile("other", new Uint8Array(11), { maxBytes: 10 }))
      expect(refused).toMatchObject({ _tag: "BoxFileTooLarge", path: `${workspace}/other` })
      expect((yield* Effect.flip(files.readFile("other")))._tag).toBe("BoxFileNotFound")
    }))

  it.scoped("a write into a missing directory names it; a directory is no file to read; a file is no tree to download", () =>
    Effect.gen(function*() {
      const { files } = yield* filesOnFake
      const noDirectory = yield* Effect.flip(files.writeFile("sub/file", "x"))
      expect(noDirectory).toMatchObject({ _tag: "BoxFileNotFound", path: `${workspace}/sub` })
      expect(noDirectory.message).toBe(`${workspace}/sub: no such directory in the box (writing ${workspace}/sub/file)`)
      const directory = yield* Effect.flip(files.readFile("."))
      expect(directory).toMatchObject({ _tag: "BoxFileError", path: workspace, message: `${workspace}: not a regular file (directory)` })
      yield* files.writeFile("plain", "x")
      const notTree = yield* Effect.flip(files.download("plain", dirs.fresh("out")))
      expect(notTree).toMatchObject({ _tag: "BoxFileError", path: `${workspace}/plain` })
      expect(notTree.message).toContain("not a directory (file)")
    }))

  it.scoped("a host tree uploaded into the workspace downloads back the same, byte for byte, links and modes kept", () =>
    Effect.gen(function*() {
      const { files } = yield* filesOnFake
      const source = dirs.fresh("tree")
      fs.mkdirSync(path.join(source, "sub", "deeper"), { recursive: true })
      fs.writeFileSync(path.join(source, "a.bin"), Buffer.from([0, 1, 2, 255, 10, 13]))
      fs.writeFileSync(path.join(source, "sub", "run.sh"), "#!/bin/sh\necho hi\n", { mode: 0o755 })
      fs.writeFileSync(path.join(source, "sub", "deeper", "empty"), "")
      fs.symlinkSync("sub/run.sh", path.join(source, "link"))
      yield* files.upload(source, ".")
      expect(Buffer.from(yield* files.readFile("sub/run.sh")).toString()).toBe("#!/bin/sh\necho hi\n")
      // A link is followed in the box.
      expect(Buffer.from(yield* files.readFile("link")).toString()).toBe("#!/bin/sh\necho hi\n")
      const back = path.join(dirs.fresh("back"), "made")
      yield* files.download(".", back)
      expect(fs.readFileSync(path.join(back, "a.bin"))).toEqual(Buffer.from([0, 1, 2, 255, 10, 13]))
      expect(fs.statSync(path.join(back, "sub", "run.sh")).mode & 0o777).toBe(0o755)
      expect(fs.readFileSync(path.join(back, "sub", "deeper", "empty"), "utf8")).toBe("")
      expect(fs.readlinkSync(path.join(back, "link"))).toBe("sub/run.sh")
      const tooLarge = yield* Effect.flip(files.upload(source, ".", { maxBytes: 1024 }))
      expect(tooLarge).toMatchObject({ _tag: "BoxFileTooLarge", path: workspace, maxBytes: 1024 })
      expect(tooLarge.message).toBe(`${workspace}: the host directory ${source} packs to more than 1024 bytes`)
      const missingSource = yield* Effect.flip(files.upload(path.join(source, "nope"), "."))
      expect(missingSource).toMatchObject({ _tag: "BoxFileError", path: workspace })
      expect(missingSource.message).toContain(`cannot read the host directory ${path.join(source, "nope")}`)
    }))
})
