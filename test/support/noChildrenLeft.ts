/**
 * Setup of the process project: a test file leaves no child process of its fork behind. A fork runs
 * file after file, and the next file counts the fork's children as its own.
 */
import { execFileSync } from "node:child_process"
import { afterAll } from "vitest"
import { eventually } from "./cli.js"

/** The fork's children that are not zombies, as pid and command line. */
const children = (): ReadonlyArray<{ readonly pid: number; readonly args: string }> => {
  // `ps` exits with 1 when it lists nothing.
  let listed = ""
  try {
    listed = execFileSync("ps", ["--ppid", String(process.pid), "-o", "pid=,stat=,args="], { encoding: "utf8" })
  } catch {
    return []
  }
  return listed.split("\n")
    .map((line) => line.trim().split(/\s+/))
    .filter(([pid, stat]) => pid !== undefined && pid !== "" && !stat?.startsWith("Z"))
    .map(([pid, , ...args]) => ({ pid: Number(pid), args: args.join(" ").slice(0, 120) }))
    .filter(({ args }) => !args.startsWith("ps --ppid"))
}

// A child that is ending (a reaper told goodbye) may take a moment: up to 5 s. What is left is
// reported, then killed, so the next file in this fork starts clean.
afterAll(async () => {
  if (await eventually(() => children().length === 0, 5_000)) return
  const left = children()
  for (const { pid } of left) {
    try {
      process.kill(pid, "SIGKILL")
    } catch {
      // Gone meanwhile.
    }
  }
  throw new Error(`the file left child processes behind: ${left.map(({ pid, args }) => `${pid} ${args}`).join("; ")}`)
})
