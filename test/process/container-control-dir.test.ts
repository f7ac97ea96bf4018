/**
 * A box's control directory as the host uses it, with entries a command in the box planted there
 * under the names the host will use (they are predictable): the host must not write or read a host
 * file through a link, nor wait on a FIFO, nor fail on a directory. Real files, no engine needed.
 */
import { afterAll, describe, expect, it } from "@effect/vitest"
import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { ControlDir } from "../../src/layers/internal/container/ControlDir.js"
import { tempDirs } from "../support/tempDirs.js"

const dirs = tempDirs("effect-bash-control-dir")
afterAll(dirs.removeAll)

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
  it("a cancel neither truncates nor reads a host file through the links planted at its names; it counts as made", () => {
    const { control, victim, pidFile, entry } = setup()
    try {
      fs.symlinkSync(victim, entry("1.cancel"))
      fs.symlinkSync(pidFile, entry("1.pid"))
      const waiter = control.expect()
      expect(waiter.name).toBe("1")
      expect(waiter.cancel()).toBeUndefined()
      expect(fs.readFileSync(victim, "utf8")).toBe("host data\n")
      expect(fs.lstatSync(entry("1.cancel")).isSymbolicLink()).toBe(true)
    } finally {
      control.close({ boxGone: true })
    }
  })

  it("a cancel with nothing planted makes its file and reads the leader's pid", () => {
    const { control, entry } = setup()
    try {
      const waiter = control.expect()
      fs.writeFileSync(entry(`${waiter.name}.pid`), "77\n")
      expect(waiter.cancel()).toBe(77)
      expect(fs.statSync(entry(`${waiter.name}.cancel`)).isFile()).toBe(true)
    } finally {
      control.close({ boxGone: true })
    }
  })

  it("a status that is a link to a host file, a FIFO or a directory is no status, read without waiting", () => {
    const { control, entry } = setup()
    const statusFile = path.join(dirs.fresh("host-status"), "status")
    fs.writeFileSync(statusFile, "exit 0 empty\n")
    try {
      const linked = control.expect()
      fs.symlinkSync(statusFile, entry(linked.name))
      const fifo = control.expect()
      execFileSync("mkfifo", [entry(fifo.name), entry(`${fifo.name}.pid`)])
      const directory = control.expect()
      fs.mkdirSync(path.join(entry(directory.name), "inside"), { recursive: true })
      for (const waiter of [linked, fifo, directory]) expect(waiter.read()).toBeUndefined()
      expect(fifo.cancel()).toBeUndefined()
      for (const waiter of [linked, fifo, directory]) waiter.release()
      // The abandoned exec's files stay until its status is final, the directory until the box is gone.
      expect(fs.readdirSync(control.path).sort()).toEqual([fifo.name, `${fifo.name}.cancel`, `${fifo.name}.pid`, directory.name])
      expect(fs.readFileSync(statusFile, "utf8")).toBe("exit 0 empty\n")
    } finally {
      control.close({ boxGone: true })
    }
  })

  it("release unlinks an exec's entries: a link goes, not what it names; a directory put at one stays until the box is gone", () => {
    const { control, victim, entry } = setup()
    const hostDir = path.dirname(victim)
    const waiter = control.expect()
    fs.symlinkSync(hostDir, entry(`${waiter.name}.j`))
    fs.mkdirSync(path.join(entry(`${waiter.name}.cancel`), "inside"), { recursive: true })
    fs.writeFileSync(entry(waiter.name), "exit 0 empty\n")
    waiter.release()
    expect(fs.readdirSync(control.path)).toEqual([`${waiter.name}.cancel`])
    expect(fs.readFileSync(victim, "utf8")).toBe("host data\n")
    control.close({ boxGone: false })
    expect(fs.readdirSync(control.path)).toEqual([`${waiter.name}.cancel`])
    control.close({ boxGone: true })
    expect(fs.existsSync(control.path)).toBe(false)
    expect(fs.readdirSync(hostDir).sort()).toEqual(["pid", "victim"])
  })

  it("a status the wrapper wrote is read, however much a command appended to it", () => {
    const { control, entry } = setup()
    try {
      const waiter = control.expect()
      fs.writeFileSync(entry(waiter.name), `signal SIGKILL empty\n${"x".repeat(1 << 20)}`)
      expect(waiter.read()).toEqual({ exitCode: null, signal: "SIGKILL", groupAlive: false, oomKilled: false })
    } finally {
      control.close({ boxGone: true })
    }
  })
})
