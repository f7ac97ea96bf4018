/**
 * A box's control directory as the host uses it, with entries a command in the box planted there
 * under the names the host uses (a command sees them once its exec has started): the host must not
 * write or read a host file through a link, nor wait on a FIFO, nor fail on a directory, nor take a
 * status without its call's tags. Real files, no engine needed.
 */
import { afterAll, describe, expect, it } from "@effect/vitest"
import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { Effect } from "effect"
import type { StatusWaiter } from "../../src/layers/internal/container/statusChannel.js"
import { ControlDir } from "../../src/layers/internal/container/ControlDir.js"
import { statusTag } from "../../src/layers/internal/container/wrapper.js"
import { tempDirs } from "../support/tempDirs.js"

const dirs = tempDirs("effect-bash-control-dir")
afterAll(dirs.removeAll)

/** `line` as the wrapper writes it under the waiter's key. */
const tagged = (waiter: StatusWaiter, line: string) =>
  `${line} ${statusTag(line, ...waiter.key.first)} ${statusTag(line, ...waiter.key.second)}\n`

const close = (control: ControlDir, boxGone: boolean) => Effect.runPromise(control.close({ boxGone }))

/** A control directory, and host files outside it that a box must not reach. */
const setup = () => {
  const control = new ControlDir(path.join(dirs.fresh("box"), "control"))
  const host = dirs.fresh("host")
  const victim = path.join(host, "victim")
  const pidFile = path.join(host, "pid")
  fs.writeFileSync(victim, "host data\n")
  fs.writeFileSync(pidFile, "4242\n")
  return { control, victim, pidFile, entry: (name: string) => path.join(control.path, name) }
}

describe("a box's control directory, which the box writes too", () => {
  it("a cancel neither truncates nor reads a host file through the links planted at its names; it counts as made", async () => {
    const { control, victim, pidFile, entry } = setup()
    try {
      const waiter = control.expect()
      fs.symlinkSync(victim, entry(`${waiter.name}.cancel`))
      fs.symlinkSync(pidFile, entry(`${waiter.name}.pid`))
      expect(Effect.runSync(waiter.cancel)).toBeUndefined()
      expect(fs.readFileSync(victim, "utf8")).toBe("host data\n")
      expect(fs.lstatSync(entry(`${waiter.name}.cancel`)).isSymbolicLink()).toBe(true)
    } finally {
      await close(control, true)
    }
  })

  it("names no command can guess: 128 random bits each", async () => {
    const { control } = setup()
    try {
      const names = Array.from({ length: 50 }, () => control.expect().name)
      expect(new Set(names).size).toBe(50)
      for (const name of names) expect(name).toMatch(/^[0-9a-f]{32}$/)
    } finally {
      await close(control, true)
    }
  })

  it("a status without its call's tags is no status: untagged, tagged under another call's key, or its empty line forged", async () => {
    const { control, entry } = setup()
    try {
      const waiter = control.expect()
      const other = control.expect()
      fs.writeFileSync(entry(waiter.name), "exit 0 empty\n")
      expect(waiter.read()).toBeUndefined()
      fs.writeFileSync(entry(waiter.name), tagged(other, "exit 0 empty"))
      expect(waiter.read()).toBeUndefined()
      fs.writeFileSync(entry(waiter.name), tagged(waiter, "exit 3 alive") + "empty\nempty 1 2\n")
      expect(waiter.read()).toEqual({ exitCode: 3, signal: null, groupAlive: true, oomKilled: false })
      fs.appendFileSync(entry(waiter.name), `${waiter.key.emptyLine}\n`)
      expect(waiter.read()).toEqual({ exitCode: 3, signal: null, groupAlive: false, oomKilled: false })
    } finally {
      await close(control, true)
    }
  })

  it("a cancel with nothing planted makes its file and reads the leader's pid", async () => {
    const { control, entry } = setup()
    try {
      const waiter = control.expect()
      fs.writeFileSync(entry(`${waiter.name}.pid`), "77\n")
      expect(Effect.runSync(waiter.cancel)).toBe(77)
      expect(fs.statSync(entry(`${waiter.name}.cancel`)).isFile()).toBe(true)
    } finally {
      await close(control, true)
    }
  })

  it("a status that is a link to a host file, a FIFO or a directory is no status, read without waiting", async () => {
    const { control, entry } = setup()
    const statusFile = path.join(dirs.fresh("host-status"), "status")
    try {
      const linked = control.expect()
      // A status the host would take, were it read through the link.
      fs.writeFileSync(statusFile, tagged(linked, "exit 0 empty"))
      fs.symlinkSync(statusFile, entry(linked.name))
      const fifo = control.expect()
      execFileSync("mkfifo", [entry(fifo.name), entry(`${fifo.name}.pid`)])
      const directory = control.expect()
      fs.mkdirSync(path.join(entry(directory.name), "inside"), { recursive: true })
      for (const waiter of [linked, fifo, directory]) expect(waiter.read()).toBeUndefined()
      expect(Effect.runSync(fifo.cancel)).toBeUndefined()
      for (const waiter of [linked, fifo, directory]) waiter.release()
      // The abandoned exec's files stay until its status is final, the directory until the box is gone.
      expect(fs.readdirSync(control.path).sort()).toEqual([fifo.name, `${fifo.name}.cancel`, `${fifo.name}.pid`, directory.name].sort())
      expect(fs.readFileSync(statusFile, "utf8")).toBe(tagged(linked, "exit 0 empty"))
    } finally {
      await close(control, true)
    }
  })

  it("release unlinks an exec's entries: a link goes, not what it names; a directory put at one stays until the box is gone", async () => {
    const { control, victim, entry } = setup()
    const hostDir = path.dirname(victim)
    const waiter = control.expect()
    fs.symlinkSync(hostDir, entry(`${waiter.name}.pid`))
    fs.mkdirSync(path.join(entry(`${waiter.name}.cancel`), "inside"), { recursive: true })
    fs.writeFileSync(entry(waiter.name), tagged(waiter, "exit 0 empty"))
    waiter.release()
    expect(fs.readdirSync(control.path)).toEqual([`${waiter.name}.cancel`])
    expect(fs.readFileSync(victim, "utf8")).toBe("host data\n")
    await close(control, false)
    expect(fs.readdirSync(control.path)).toEqual([`${waiter.name}.cancel`])
    await close(control, true)
    expect(fs.existsSync(control.path)).toBe(false)
    expect(fs.readdirSync(hostDir).sort()).toEqual(["pid", "victim"])
  })

  it("a status the wrapper wrote is read, however much a command appended to it", async () => {
    const { control, entry } = setup()
    try {
      const waiter = control.expect()
      fs.writeFileSync(entry(waiter.name), `${tagged(waiter, "signal SIGKILL empty")}${"x".repeat(1 << 20)}`)
      expect(waiter.read()).toEqual({ exitCode: null, signal: "SIGKILL", groupAlive: false, oomKilled: false })
    } finally {
      await close(control, true)
    }
  })
})
