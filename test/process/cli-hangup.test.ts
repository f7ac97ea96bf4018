/**
 * A terminal that hangs up (its window closed) while `effect-bash run` asks on it: the CLI ends by that
 * SIGHUP, never by a crash (Node restoring the gone terminal's settings as it exits aborts), and leaves
 * no process behind. The built CLI runs on a real pseudo-terminal made by python3's `pty.fork()`
 * (`fixtures/hangup.py`), which closes the master side at the prompt and reports the exit status.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { spawn, spawnSync } from "node:child_process"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import * as readline from "node:readline"
import { afterAll } from "vitest"
import { bwrapUsable } from "../support/bwrap.js"
import { cliPath } from "../support/cli.js"
import { pollUntil } from "../support/poll.js"
import { processTable, stateOf } from "../support/processes.js"

const ptyUsable = spawnSync("python3", ["-c", "import pty"]).status === 0
const driver = join(import.meta.dirname, "..", "support", "fixtures", "hangup.py")

const workdir = mkdtempSync(join(tmpdir(), "effect-bash-cli-hangup-"))
afterAll(() => rmSync(workdir, { recursive: true, force: true }))

/** `pid` and every process below it, now. */
const withDescendants = (pid: number): Array<number> => {
  const table = processTable()
  const found = [pid]
  for (let i = 0; i < found.length; i++) {
    for (const row of table) if (row.ppid === found[i]) found.push(row.pid)
  }
  return found
}

const isGone = (pid: number) => {
  const state = stateOf(pid)
  return state === undefined || state === "Z"
}

/**
 * `run` asking for an escalation on a pseudo-terminal, hung up as soon as the question shows: how it
 * ended, and the processes it had meanwhile that are still alive after a bounded wait.
 */
const hangUpAtPrompt = Effect.promise(async () => {
  const args = [
    "run", "--workdir", workdir, "--sandbox", "read-only",
    "--sandbox-permissions", "workspace-write", "--justification", "It writes the report.", "--",
    "echo hi > report.txt"
  ]
  const child = spawn("python3", [driver, "[y/N]", process.execPath, cliPath, ...args], {
    stdio: ["ignore", "pipe", "inherit"]
  })
  const exited = new Promise((resolve) => child.once("exit", resolve))
  const lines = readline.createInterface({ input: child.stdout! })[Symbol.asyncIterator]()
  const next = async () => (await lines.next()).value as string | undefined
  const seen = new Set<number>()
  try {
    const pid = Number((await next())?.replace(/^pid /, ""))
    // The CLI and what it started (the host-death reaper, …), as often as /proc can be read until it ends.
    let watching = true
    const watch = (async () => {
      while (watching) {
        for (const member of withDescendants(pid)) seen.add(member)
        await new Promise((resolve) => setTimeout(resolve, 5))
      }
    })()
    const ended = await next()
    watching = false
    await watch
    const survivors = await pollUntil(() => [...seen].filter((member) => !isGone(member)), (left) => left.length === 0, 10_000)
    return { ended, survivors, watched: seen.size > 1 }
  } finally {
    child.kill("SIGKILL")
    await exited
  }
})

// A crash came in about one run of five: enough runs that one would show.
const runs = 20

describe.skipIf(!bwrapUsable || !ptyUsable)("effect-bash run: the terminal hangs up at the approval question", () => {
  it.live(`ends by SIGHUP, not a crash, and leaves no process behind (${runs} runs)`, () =>
    Effect.gen(function*() {
      const outcomes: Array<{ ended: string | undefined; survivors: Array<number>; watched: boolean }> = []
      for (let run = 0; run < runs; run++) outcomes.push(yield* hangUpAtPrompt)
      expect(outcomes.map(({ ended, survivors }) => ({ ended, survivors }))).toEqual(
        Array(runs).fill({ ended: "signal SIGHUP", survivors: [] })
      )
      // The watch saw what the CLI started (on a loaded machine a run can end between two looks).
      expect(outcomes.some(({ watched }) => watched)).toBe(true)
    }), { timeout: 300_000 })
})
