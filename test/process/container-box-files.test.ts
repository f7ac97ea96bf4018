/**
 * The box file service on real engines: the local socket, and (EFFECT_BASH_TEST_REMOTE_ENGINE) an
 * engine that shares no file system with the host. A host tree uploaded into a session's `volume`
 * box is read and changed by a command there, and downloaded back byte for byte; on the remote
 * engine, nothing of the host is mounted in the box.
 */
import { afterAll, describe, expect, it } from "@effect/vitest"
import { Context, Effect, Layer } from "effect"
import * as crypto from "node:crypto"
import * as fs from "node:fs"
import * as path from "node:path"
import * as DockerBashExecutor from "../../src/layers/DockerBashExecutor.js"
import { BashExecutor } from "../../src/services/BashExecutor.js"
import { BoxFiles } from "../../src/services/BoxFiles.js"
import { containersWith, dockerUnavailable, testImage } from "../support/docker.js"
import { tempDirs } from "../support/tempDirs.js"

const remote = process.env.EFFECT_BASH_TEST_REMOTE_ENGINE
const dirs = tempDirs("effect-bash-box-files")
afterAll(dirs.removeAll)

let sessions = 0
const freshSession = () => `box-files-test-${process.pid}-${++sessions}`

/** A host tree with a binary file, an executable, an empty file in a nested directory and a link. */
const seedTree = () => {
  const source = dirs.fresh("seed")
  fs.mkdirSync(path.join(source, "sub", "deeper"), { recursive: true })
  fs.writeFileSync(path.join(source, "a.bin"), Buffer.concat([crypto.randomBytes(100_000), Buffer.from(Array.from({ length: 256 }, (_, i) => i))]))
  fs.writeFileSync(path.join(source, "sub", "script.sh"), "#!/bin/bash\necho ran\n", { mode: 0o755 })
  fs.writeFileSync(path.join(source, "sub", "deeper", "empty"), "")
  fs.symlinkSync("sub/script.sh", path.join(source, "link"))
  return source
}

/** The executor and the file service of one layer on the engine at `dockerHost` (the default one when absent). */
const onEngine = (dockerHost: string | undefined, workspace: string) =>
  Effect.map(
    Layer.build(DockerBashExecutor.layer({ image: testImage, cwd: workspace, workspace: "volume", dockerHost, graceMs: 500 })),
    (context) => ({ bash: Context.get(context, BashExecutor), files: Context.get(context, BoxFiles) })
  )

const roundTrip = (dockerHost: string | undefined) =>
  Effect.gen(function*() {
    // A path of this host's the engine's boxes use for their volume; the host's stays empty.
    const workspace = dirs.fresh("volume-path")
    const { bash, files } = yield* onEngine(dockerHost, workspace)
    const session = freshSession()
    const source = seedTree()
    yield* files.upload(source, ".", { session })

    // The command reads the tree and changes it, as the box's user.
    const run = (command: string) => Effect.flatMap(bash.resolve({ command, dshEnv: { DSH_SESSION_ID: session } }), bash.run)
    const result = yield* run(
      "wc -c < a.bin; ./link > out.txt; printf changed >> sub/deeper/empty; rm link; mkdir new; cp a.bin new/copy.bin; " +
        "id -u; cat /proc/self/mountinfo"
    )
    expect(result.exitCode).toBe(0)
    const [size, uid, ...mounts] = result.stdout.text.split("\n")
    expect(size).toBe("100256")
    expect(uid).toBe("1000")
    // The workspace is an engine volume, no directory of this host's.
    const workspaceMount = mounts.find((line) => line.split(" ")[4] === workspace)
    expect(workspaceMount).toContain("/volumes/")
    expect(fs.readdirSync(workspace)).toEqual([])

    const back = path.join(dirs.fresh("download"), "tree")
    yield* files.download(".", back, { session })
    const original = fs.readFileSync(path.join(source, "a.bin"))
    expect(fs.readdirSync(back).sort()).toEqual(["a.bin", "new", "out.txt", "sub"])
    expect(fs.readFileSync(path.join(back, "a.bin")).equals(original)).toBe(true)
    expect(fs.readFileSync(path.join(back, "new", "copy.bin")).equals(original)).toBe(true)
    expect(fs.readFileSync(path.join(back, "out.txt"), "utf8")).toBe("ran\n")
    expect(fs.readFileSync(path.join(back, "sub", "deeper", "empty"), "utf8")).toBe("changed")
    expect(fs.readFileSync(path.join(back, "sub", "script.sh"), "utf8")).toBe("#!/bin/bash\necho ran\n")
    expect(fs.statSync(path.join(back, "sub", "script.sh")).mode & 0o777).toBe(0o755)

    // One file each way, and a bounded read.
    yield* files.writeFile("sub/written.txt", "from the host\n", { session })
    expect((yield* run("cat sub/written.txt; echo more >> sub/written.txt")).stdout.text).toBe("from the host\n")
    expect(Buffer.from(yield* files.readFile(`${workspace}/sub/written.txt`, { session })).toString()).toBe("from the host\nmore\n")
    const tooLarge = yield* Effect.flip(files.readFile("a.bin", { session, maxBytes: 1000 }))
    expect(tooLarge).toMatchObject({ _tag: "BoxFileTooLarge", path: `${workspace}/a.bin`, maxBytes: 1000 })
    const missing = yield* Effect.flip(files.readFile("nothing-here", { session }))
    expect(missing).toMatchObject({ _tag: "BoxFileNotFound", path: `${workspace}/nothing-here` })
    return session
  }).pipe(Effect.scoped)

describe.skipIf(dockerUnavailable !== undefined)("BoxFiles on the local engine", () => {
  it.live("a tree uploaded into a volume box, changed by a command there, downloads back byte for byte", () =>
    Effect.gen(function*() {
      const session = yield* roundTrip(undefined)
      // The box went with the layer.
      expect(containersWith({ "effect-bash.session": session })).toEqual([])
    }), 60_000)
})

describe.skipIf(remote === undefined)("BoxFiles on an engine that shares no file system (EFFECT_BASH_TEST_REMOTE_ENGINE)", () => {
  it.live("a tree uploaded into a volume box there, changed by a command there, downloads back byte for byte", () =>
    Effect.asVoid(roundTrip(remote)), 60_000)
})
