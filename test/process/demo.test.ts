import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { existsSync } from "node:fs"
import { startCli } from "../support/cli.js"
import { descendantsOf, liveMembersOf, processOf } from "../support/processes.js"

/** Runs `effect-bash demo`, noting every process group its commands ran in while it ran. */
const runDemo = Effect.promise(async () => {
  const { child, done } = startCli(["demo"], { limitMs: 55_000 })
  const ownGroup = child.pid === undefined ? undefined : processOf(child.pid)?.pgid
  const groups = new Set<number>()
  let finished = false
  const outcome = done.finally(() => (finished = true))
  while (!finished) {
    if (child.pid !== undefined) {
      for (const pid of descendantsOf(child.pid)) {
        const pgrp = processOf(pid)?.pgid
        if (pgrp !== undefined && pgrp !== ownGroup) groups.add(pgrp)
      }
    }
    await Promise.race([outcome, new Promise((resolve) => setTimeout(resolve, 50))])
  }
  return { outcome: await outcome, groups: [...groups] }
})

describe("effect-bash demo (real processes)", () => {
  it.live("runs to completion without waiting out its minute-long background task, printing every heading and each step's result, leaving nothing behind", () =>
    Effect.gen(function*() {
      const { groups, outcome } = yield* runDemo
      expect(outcome.code).toBe(0)
      // Well under the minute its background task idles, with room for a loaded machine.
      expect(outcome.elapsedMs).toBeLessThan(45_000)
      const headings = outcome.stdout.split("\n").filter((line) => line.startsWith("=== "))
      expect(headings).toEqual([
        "=== 1. An ok command (bash) ===",
        "=== 2. Live output: progress while it runs, then the result (bash, onProgress) ===",
        "=== 3. A failing command: a non-zero exit is a result, not an error (bash) ===",
        "=== 4. A timeout: SIGTERM is ignored, SIGKILL follows after the grace (bash, timeoutMs 1000) ===",
        "=== 5. A flood, truncated to its last 160 bytes with its spill path (bash) ===",
        "=== 6. The spill file holds the whole stream (bash) ===",
        "=== 7. A background task (bash, run_in_background) ===",
        "=== 8. Read its output, waiting up to 2 s (task_output) ===",
        "=== 9. List the tasks (task_list) ===",
        "=== 10. Kill it (task_kill) ===",
        "=== 11. Read its end (task_output) ==="
      ])
      const section = (n: number) => outcome.stdout.split(/^=== \d+\. .* ===$/m)[n] ?? ""
      expect(section(1)).toContain("hello from effect-bash\n")
      // Progress comes before the result, however the updates were grouped.
      expect(section(2)).toBe("\nlive | step 1\nlive | step 2\nlive | step 3\nresult:\nstep 1\nstep 2\nstep 3\n\n")
      expect(section(3)).toBe("\nchecking the config\n[stderr]\nconfig.yml: no such file\n[exit code: 3]\n\n")
      expect(section(4)).toBe("\nignoring SIGTERM\n[timed out after 1000ms]\n[killed by signal: SIGKILL]\n\n")
      const spill = /\n99999\n100000\n\n\[output truncated; full output: (\/\S+)\]\n\n$/.exec(section(5))
      expect(spill).not.toBeNull()
      expect(section(6)).toBe("\n100000\n1\n2\n3\n\n")
      expect(section(7)).toBe("\nstarted background task bash-1\n\n")
      expect(section(8)).toBe("\ntick 1\ntick 2\ntick 3\nnow idling\n[status: running]\n\n")
      expect(section(9)).toMatch(/^\nbash-1 \[bash\] running — for i in 1 2 3/)
      expect(section(10)).toBe("\nrequested cancellation of task bash-1\n\n")
      expect(section(11)).toMatch(/^\n\(no new output\)\n\[status: killed, signal: SIGTERM\]\n\nDone: /)
      expect(outcome.stderr).toBe("")
      // "Done: ... every process it started is gone": the groups seen while it ran (at least the
      // minute-long background task's) have no live member, and the spill file went with the stack.
      expect(groups).not.toEqual([])
      expect(liveMembersOf(groups)).toEqual([])
      expect(existsSync(spill?.[1] ?? "")).toBe(false)
    }))
})
