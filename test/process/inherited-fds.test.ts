/**
 * A host that inherited descriptors without close-on-exec (a harness's supervisor pipe, a lock
 * file): no command gets them — each reaches the command as /dev/null. Real processes, through the
 * built binary, which inherits a file open at fd 40 the way it would inherit a harness's pipe.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { closeSync, mkdtempSync, openSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll } from "vitest"
import { cleanEnv, runCli } from "../support/cli.js"
import { bwrapUsable } from "../support/bwrap.js"

const dir = mkdtempSync(join(tmpdir(), "effect-bash-inherited-"))
const heldFile = join(dir, "supervisor-pipe-stand-in")
const held = openSync(heldFile, "w")
afterAll(() => {
  closeSync(held)
  rmSync(dir, { recursive: true, force: true })
})

const inheritedAt = 40
const extraFds = [...Array.from({ length: inheritedAt - 3 }, () => "ignore" as const), held]
const listFds = "for fd in /proc/self/fd/*; do echo \"${fd##*/} $(readlink $fd)\"; done"

const run = (args: ReadonlyArray<string>) =>
  Effect.promise(() => runCli(["run", ...args], { env: cleanEnv(), extraFds }))

describe("descriptors the host inherited", () => {
  it.live("reach a command as /dev/null, not as the host's file", () =>
    Effect.gen(function*() {
      const outcome = yield* run(["--", listFds])
      expect(outcome.stdout).not.toContain(heldFile)
      expect(outcome.stdout).toContain(`${inheritedAt} /dev/null`)
    }))

  it.live("also for a command too long for argv, read over fd 3", () =>
    Effect.gen(function*() {
      const outcome = yield* run(["--", `: ${"x".repeat(70_000)}\n${listFds}`])
      expect(outcome.stdout).not.toContain(heldFile)
      expect(outcome.stdout).toContain(`${inheritedAt} /dev/null`)
    }))

  it.live.skipIf(!bwrapUsable)("also under --contain, where bwrap is what is spawned", () =>
    Effect.gen(function*() {
      const outcome = yield* run(["--contain", "--", listFds])
      expect(outcome.stdout).not.toContain(heldFile)
    }))
})
