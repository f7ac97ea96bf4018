/**
 * The baseline: `node:child_process` spawn of `bash -c`, detached, stdin ignored.
 */
import { spawn } from "node:child_process"
import type { ChildProcess } from "node:child_process"
import { createWriteStream } from "node:fs"
import { join } from "node:path"
import { pipeline } from "node:stream/promises"
import type { Runner, WrittenFile } from "./Runner.js"
import { bashArgs } from "./Runner.js"

const start = (command: string): ChildProcess =>
  spawn("bash", bashArgs(command), { detached: true, stdio: ["ignore", "pipe", "pipe"] })

/** Resolves when the child has exited and its pipes have closed; rejects on a spawn error. */
export const closed = (child: ChildProcess): Promise<void> =>
  new Promise((resolve, reject) => {
    child.once("error", reject)
    child.once("close", () => resolve())
  })

let fileCounter = 0

/** Pipes the command's whole stdout to a new file in `dir` (also the RSS baseline). */
export const rawRunToFile = async (command: string, dir: string): Promise<WrittenFile> => {
  const path = join(dir, `raw-${process.pid}-${++fileCounter}.out`)
  const child = start(command)
  const stderr: Array<Buffer> = []
  child.stderr!.on("data", (chunk: Buffer) => stderr.push(chunk))
  await Promise.all([pipeline(child.stdout!, createWriteStream(path, { flags: "wx", mode: 0o600 })), closed(child)])
  return { path }
}

/** The raw `child_process` contender. */
export const rawRunner: Runner = {
  id: "raw",
  label: "raw child_process",
  level: "process",
  run: async (command) => {
    const child = start(command)
    const stdout: Array<Buffer> = []
    const stderr: Array<Buffer> = []
    child.stdout!.on("data", (chunk: Buffer) => stdout.push(chunk))
    child.stderr!.on("data", (chunk: Buffer) => stderr.push(chunk))
    await closed(child)
  },
  runToFile: rawRunToFile,
  close: async () => {}
}

/**
 * Runs `command` with the same timeout policy our executor follows — SIGTERM to the group at
 * `timeoutMs`, SIGKILL `graceMs` later — and resolves once the child has closed.
 */
export const rawRunWithTimeout = async (command: string, timeoutMs: number, graceMs: number): Promise<void> => {
  const child = start(command)
  child.stdout!.resume()
  child.stderr!.resume()
  const signalGroup = (signal: NodeJS.Signals) => {
    try {
      process.kill(-child.pid!, signal)
    } catch {
      // the group is already gone
    }
  }
  let killTimer: NodeJS.Timeout | undefined
  const termTimer = setTimeout(() => {
    signalGroup("SIGTERM")
    killTimer = setTimeout(() => signalGroup("SIGKILL"), graceMs)
  }, timeoutMs)
  try {
    await closed(child)
  } finally {
    clearTimeout(termTimer)
    if (killTimer !== undefined) clearTimeout(killTimer)
  }
}
