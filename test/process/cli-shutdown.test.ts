/**
 * The CLI's shutdown escalation once through the built CLI, with real signals.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { eventually, startCli } from "../support/cli.js"
import { liveMembersOf } from "../support/processes.js"

describe("effect-bash run: a second signal escalates at once (real process)", () => {
  it.live("a TERM-ignoring command with a 30 s grace dies at the second SIGINT, not after the grace", () =>
    Effect.promise(async () => {
      const workdir = mkdtempSync(join(tmpdir(), "effect-bash-shutdown-"))
      const pidFile = join(workdir, "stubborn.pid")
      const { child, done } = startCli(
        ["run", "--grace-ms", "30000", "--workdir", workdir, "--", `trap '' TERM; echo $$ > ${pidFile}; sleep 60 & wait`],
        { limitMs: 20_000 }
      )
      let shell: number | undefined
      try {
        await eventually(() => existsSync(pidFile) && readFileSync(pidFile, "utf8").endsWith("\n"), 15_000)
        expect(readFileSync(pidFile, "utf8")).toMatch(/^\d+\n$/)
        shell = Number(readFileSync(pidFile, "utf8"))
        const group = [shell]
        expect(await eventually(() => liveMembersOf(group).length === 2)).toBe(true)
        child.kill("SIGINT")
        // The first signal starts a graceful shutdown: the group got SIGTERM and ignores it.
        await new Promise((resolve) => setTimeout(resolve, 300))
        expect(liveMembersOf(group)).toHaveLength(2)
        child.kill("SIGINT")
        // Bounded well below the 30 s grace (the run is SIGKILLed at 20 s by startCli's limit).
        const outcome = await done
        expect(outcome).toMatchObject({ code: 130, signal: null })
        expect(outcome.elapsedMs).toBeLessThan(15_000)
        expect(liveMembersOf(group)).toEqual([])
      } finally {
        // Only when the test failed is anything left to kill.
        if (shell !== undefined && liveMembersOf([shell]).length > 0) process.kill(-shell, "SIGKILL")
        rmSync(workdir, { recursive: true, force: true })
      }
    }))
})
