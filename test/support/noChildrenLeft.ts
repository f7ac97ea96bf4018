/**
 * Setup of the process project: a test file leaves no child process of its fork behind. A fork runs
 * file after file, and the next file counts the fork's children as its own.
 */
import { afterAll } from "vitest"
import { eventually } from "./cli.js"
import { childrenOf, commandLineOf } from "./processes.js"

// A child that is ending (a reaper told goodbye) may take a moment: up to 5 s. What is left is
// reported, then killed, so the next file in this fork starts clean.
afterAll(async () => {
  if (await eventually(() => childrenOf(process.pid).length === 0, 5_000)) return
  const left = childrenOf(process.pid)
  const described = left.map((pid) => `${pid} ${commandLineOf(pid).slice(0, 120) || "(gone)"}`)
  for (const pid of left) {
    try {
      process.kill(pid, "SIGKILL")
    } catch {
      // Gone meanwhile.
    }
  }
  throw new Error(`the file left child processes behind: ${described.join("; ")}`)
})
