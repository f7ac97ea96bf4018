/**
 * execa 9, configured like the raw baseline: detached, stdin ignored, output collected.
 */
import { execa } from "execa"
import { createWriteStream } from "node:fs"
import { join } from "node:path"
import { pipeline } from "node:stream/promises"
import type { Runner } from "./Runner.js"
import { bashArgs } from "./Runner.js"

let fileCounter = 0

/** The execa contender. */
export const execaRunner: Runner = {
  id: "execa",
  label: "execa 9",
  level: "process",
  run: async (command) => {
    await execa("bash", bashArgs(command), { detached: true, stdin: "ignore", reject: false, stripFinalNewline: false })
  },
  runToFile: async (command, dir) => {
    const path = join(dir, `execa-${process.pid}-${++fileCounter}.out`)
    // buffer: false streams stdout through this process (a `{ file }` target would hand the child the fd)
    const child = execa("bash", bashArgs(command), { detached: true, stdin: "ignore", reject: false, buffer: false })
    child.stderr.resume()
    await Promise.all([pipeline(child.stdout, createWriteStream(path, { flags: "wx", mode: 0o600 })), child])
    return { path }
  },
  close: async () => {}
}
