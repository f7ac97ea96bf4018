/**
 * A host that inherited descriptors without close-on-exec (a harness's supervisor pipe, a lock
 * file): no command gets them; each reaches the command as /dev/null, whichever way it is spawned. Real
 * processes, through the built binary, which inherits a file open at fd 40 the way it would inherit
 * a harness's pipe.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { closeSync, mkdtempSync, openSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll } from "vitest"
import { cleanEnv, runCli, runNode } from "../support/cli.js"
import { bwrapUsable } from "../support/bwrap.js"
import { listFds } from "../support/processes.js"

const dir = mkdtempSync(join(tmpdir(), "effect-bash-inherited-"))
const heldFile = join(dir, "supervisor-pipe-stand-in")
const held = openSync(heldFile, "w")
afterAll(() => {
  closeSync(held)
  rmSync(dir, { recursive: true, force: true })
})

const hostFixture = join(import.meta.dirname, "..", "support", "fixtures", "host.mjs")
const inheritedAt = 40
const extraFds = [...Array.from({ length: inheritedAt - 3 }, () => "ignore" as const), held]

const run = (args: ReadonlyArray<string>) =>
  Effect.promise(() => runCli(["run", ...args], { env: cleanEnv(), extraFds }))

// Each test runs its own CLI or host, in files of its own: they run side by side.
describe.concurrent("descriptors the host inherited", () => {
  it.live("reach a command the host spawned as /dev/null, and the command sees no BASH_ENV", () =>
    Effect.gen(function*() {
      const outcome = yield* run(["--", `${listFds}; echo "BASH_ENV=\${BASH_ENV-unset}"`])
      expect(outcome.stdout).not.toContain(heldFile)
      expect(outcome.stdout).toContain(`${inheritedAt} /dev/null`)
      expect(outcome.stdout).toContain("BASH_ENV=unset")
    }))

  it.live("a shell the command starts keeps its own descriptors of the same numbers", () =>
    Effect.gen(function*() {
      const outcome = yield* run(["--", `exec ${inheritedAt}</dev/zero; bash -c 'readlink /proc/self/fd/${inheritedAt}'`])
      expect(outcome.stdout).toBe("/dev/zero\n")
    }))

  it.live("reach a command posix_spawn started as /dev/null", () =>
    Effect.gen(function*() {
      // A host whose layer spawns by posix_spawn (the CLI's run uses child_process), inheriting fd 40 alike.
      const outcome = yield* Effect.promise(() =>
        runNode([hostFixture, "with-env", listFds, "PLAIN=1"], { env: cleanEnv(), extraFds })
      )
      expect(outcome.stdout).toMatch(/^spawned by posix_spawn\n/)
      expect(outcome.stdout).not.toContain(heldFile)
      expect(outcome.stdout).toContain(`${inheritedAt} /dev/null`)
    }))

  it.live("reach a command that sets its own BASH_ENV as /dev/null, and its BASH_ENV is read", () =>
    Effect.gen(function*() {
      const own = join(dir, "own-bash-env.sh")
      writeFileSync(own, "echo sourced-own\n")
      // The CLI takes no per-call env: a host script runs the executor with one, inheriting fd 40 alike.
      const outcome = yield* Effect.promise(() =>
        runNode([hostFixture, "with-env", listFds, `BASH_ENV=${own}`], { env: cleanEnv(), extraFds })
      )
      expect(outcome.stdout).toMatch(/^spawned by \w+\nsourced-own\n/)
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
