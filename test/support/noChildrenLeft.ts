/**
 * Setup of the process project: a test file leaves no child process of its fork behind. A fork runs
 * file after file, and the next file counts the fork's children as its own.
 */
import { execFileSync } from "node:child_process"
import { afterAll } from "vitest"
import { eventually } from "./cli.js"

/** The fork's children that are not zombies, as `<pid> <args>`; the `ps` that lists them aside. */
const children = (): ReadonlyArray<string> => {
  const ps = execFileSync("ps", ["-e", "-o", "pid=,ppid=,stat=,args="], { encoding: "utf8" })
  return ps.split("\n")
    .map((line) => line.trim().split(/\s+/))
    .filter(([, ppid, stat, command]) => Number(ppid) === process.pid && !stat?.startsWith("Z") && command !== "ps")
    .map(([pid, , , ...args]) => `${pid} ${args.join(" ").slice(0, 120)}`)
}

// A child that is ending (a reaper told goodbye) may take a moment: up to 5 s.
afterAll(async () => {
  if (await eventually(() => children().length === 0, 5_000)) return
  throw new Error(`the file left child processes behind: ${children().join("; ")}`)
})
