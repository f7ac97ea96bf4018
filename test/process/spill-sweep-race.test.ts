/**
 * The sweep of dead hosts' spill directories against a planted tree: its names are easy to forge, so
 * anyone who can write the parent (another user of `/tmp`, a container run as root whose workspace
 * holds it) can plant a "dead host's directory" and, while the sweep walks it, swap its subdirectories
 * for links to a directory of victim files with `renameat2(RENAME_EXCHANGE)` (the racer is
 * `fixtures/exchanger.py`). No victim file may be removed, in any of many bounded rounds.
 */
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import * as FileSystem from "@effect/platform/FileSystem"
import { afterAll, describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { spawn, spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import * as readline from "node:readline"
import { ownedPrefix } from "../../src/layers/internal/executor/spillOwner.js"
import { sweepDeadHosts } from "../../src/layers/internal/executor/spillSweep.js"
import { killAndAwait } from "../support/processes.js"
import { tempDirs } from "../support/tempDirs.js"

const dirs = tempDirs("effect-bash-sweep-race")
afterAll(dirs.removeAll)

const racer = fs.readFileSync(path.join(import.meta.dirname, "..", "support", "fixtures", "exchanger.py"), "utf8")
// An interpreter another user may run too (a pyenv shim under /root is not one).
const python = ["/usr/bin/python3", "/usr/local/bin/python3"].find((file) => fs.existsSync(file)) ?? "python3"
const nobody = 65534
const canActAsNobody = process.getuid?.() === 0 && fs.existsSync("/usr/bin/setpriv") && path.isAbsolute(python)

// A pid of our namespace that is no longer running: the directories named after it are a dead host's.
const deadPid = spawnSync("true").pid
const namespace = ownedPrefix().split("-")[2]
const deadHostDir = (parent: string, suffix: string) => path.join(parent, `effect-bash-${namespace}-${deadPid}-12345-${suffix}`)

const fileNames = Array.from({ length: 40 }, (_, index) => `f${index}`)
const pairs = 4

/** A directory of files the sweep must never remove (they share their names with the planted ones). */
const victims = () => {
  const dir = dirs.fresh("victims")
  for (const name of fileNames) fs.writeFileSync(path.join(dir, name), "victim\n")
  return { dir, left: () => fs.readdirSync(dir).length }
}

/** A dead host's directory holding `pairs` subdirectories of files, each beside a link to `victimDir`. */
const plant = (dir: string, victimDir: string) => {
  fs.mkdirSync(dir)
  const exchanged: Array<string> = []
  for (let pair = 0; pair < pairs; pair++) {
    const sub = path.join(dir, `sub${pair}`)
    fs.mkdirSync(sub)
    for (const name of fileNames) fs.writeFileSync(path.join(sub, name), "planted\n")
    fs.symlinkSync(victimDir, path.join(dir, `link${pair}`))
    exchanged.push(sub, path.join(dir, `link${pair}`))
  }
  return exchanged
}

/** Hands the tree (links included, not followed) to `uid`. */
const chownTree = (dir: string, uid: number) => {
  fs.lchownSync(dir, uid, uid)
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name)
    if (entry.isDirectory()) chownTree(full, uid)
    else fs.lchownSync(full, uid, uid)
  }
}

/** Starts the racer on `exchanged` (as `nobody` when asked); done once its first round is. */
const startRacer = (exchanged: ReadonlyArray<string>, asNobody: boolean) =>
  Effect.gen(function*() {
    const argv = [python, "-c", racer, "2000000", ...exchanged]
    const child = yield* Effect.acquireRelease(
      Effect.sync(() =>
        asNobody
          ? spawn("setpriv", [`--reuid=${nobody}`, `--regid=${nobody}`, "--clear-groups", ...argv], { stdio: ["ignore", "pipe", "inherit"] })
          : spawn(argv[0]!, argv.slice(1), { stdio: ["ignore", "pipe", "inherit"] })
      ),
      (child) =>
        Effect.promise(() => killAndAwait(child))
    )
    // Its first line, or nothing when it ended without one.
    const lines = readline.createInterface({ input: child.stdout! })
    const first = new Promise<string | undefined>((resolve) => {
      lines.once("line", resolve)
      lines.once("close", () => resolve(undefined))
    })
    expect(yield* Effect.promise(() => first).pipe(Effect.timeout(10_000))).toBe("ready")
    return child
  })

const sweep = (parent: string) =>
  Effect.flatMap(FileSystem.FileSystem, (fs) => sweepDeadHosts(fs, parent)).pipe(Effect.provide(NodeFileSystem.layer))

const rounds = 20

describe("the sweep of dead hosts' spill directories, raced", () => {
  it.live(`a directory of ours whose subdirectories are swapped for links mid-walk: no victim removed in ${rounds} rounds`, () =>
    Effect.gen(function*() {
      const parent = dirs.fresh("ours")
      const victim = victims()
      for (let round = 0; round < rounds; round++) {
        const exchanged = plant(deadHostDir(parent, `Ours${String(round).padStart(2, "0")}`), victim.dir)
        yield* Effect.scoped(Effect.zipRight(startRacer(exchanged, false), sweep(parent)))
        expect(victim.left(), `victim files left after round ${round}`).toBe(fileNames.length)
      }
    }), { timeout: 120_000 })

  it.live.skipIf(!canActAsNobody)("another user's directory, raced by that user, is left whole, and no victim removed", () =>
    Effect.gen(function*() {
      const parent = dirs.fresh("other")
      // As the shared /tmp is: anyone may plant there.
      fs.chmodSync(parent, 0o1777)
      const victim = victims()
      for (let round = 0; round < 5; round++) {
        const dir = deadHostDir(parent, `Othr${String(round).padStart(2, "0")}`)
        const exchanged = plant(dir, victim.dir)
        chownTree(dir, nobody)
        yield* Effect.scoped(Effect.zipRight(startRacer(exchanged, true), sweep(parent)))
        expect(victim.left(), `victim files left after round ${round}`).toBe(fileNames.length)
        expect(fs.lstatSync(dir).uid).toBe(nobody)
        expect(fs.readdirSync(dir).length).toBe(2 * pairs)
      }
    }), { timeout: 60_000 })

  it.live("a link named as a dead host's directory is left, and so is what it points to", () =>
    Effect.gen(function*() {
      const parent = dirs.fresh("link")
      const victim = victims()
      const link = deadHostDir(parent, "Link00")
      fs.symlinkSync(victim.dir, link)
      yield* sweep(parent)
      expect(fs.lstatSync(link).isSymbolicLink()).toBe(true)
      expect(victim.left()).toBe(fileNames.length)
    }))

  it.live("a real dead host's directory of ours is removed whole, nested directories and links included", () =>
    Effect.gen(function*() {
      const parent = dirs.fresh("legit")
      const victim = victims()
      const dir = deadHostDir(parent, "Real00")
      plant(dir, victim.dir)
      fs.mkdirSync(path.join(dir, "sub0", "deeper", "still"), { recursive: true })
      fs.writeFileSync(path.join(dir, "sub0", "deeper", "still", "stdout-x.log"), "left behind")
      const live = fs.mkdtempSync(path.join(parent, ownedPrefix()))
      yield* sweep(parent)
      expect(fs.readdirSync(parent)).toEqual([path.basename(live)])
      expect(victim.left()).toBe(fileNames.length)
    }))
})
