/**
 * The sandbox and containment flags of the CLI, end to end through the built binary.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { existsSync, mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll } from "vitest"
import { cleanEnv, runCli } from "../support/cli.js"
import { bwrapUsable } from "../support/bwrap.js"
import { sandboxUnavailableText } from "../../src/services/BashExecutor.js"

const run = (args: ReadonlyArray<string>, env: Record<string, string> = {}) =>
  Effect.promise(() => runCli(["run", ...args], { env: cleanEnv(env) }))

const workdir = mkdtempSync(join(tmpdir(), "effect-bash-cli-sandbox-"))
afterAll(() => rmSync(workdir, { recursive: true, force: true }))

const readSecret = `tr "\\0" "\\n" </proc/$PPID/environ | grep -c AWS_SECRET`

describe.skipIf(!bwrapUsable)("effect-bash run --sandbox / --contain", () => {
  // `run` composes no approval service, so no escalation is offered after the denial.
  it.live("--sandbox read-only denies a write with the reference's marker", () =>
    Effect.gen(function*() {
      const outcome = yield* run(["--workdir", workdir, "--sandbox", "read-only", "--", "echo hi > file.txt"])
      expect(outcome.stdout).toBe(
        "[stderr]\nbash: line 1: file.txt: Read-only file system\n" +
          "[sandbox: file access denied under read-only mode]\n" +
          "[exit code: 1]\n"
      )
      expect(existsSync(join(workdir, "file.txt"))).toBe(false)
    }))

  it.live("EFFECT_BASH_SANDBOX=workspace-write allows a write in the working directory", () =>
    Effect.gen(function*() {
      const outcome = yield* run(["--workdir", workdir, "--", "echo hi > ok.txt && cat ok.txt"], {
        EFFECT_BASH_SANDBOX: "workspace-write"
      })
      expect(outcome).toMatchObject({ code: 0, stdout: "hi\n" })
    }))

  it.live("--workspace-root is the writable root, not the working directory", () =>
    Effect.gen(function*() {
      const root = mkdtempSync(join(tmpdir(), "effect-bash-cli-root-"))
      const outcome = yield* run([
        "--workdir",
        workdir,
        "--sandbox",
        "workspace-write",
        "--workspace-root",
        root,
        "--",
        `echo in > ${root}/in.txt; echo out > ${workdir}/out.txt`
      ])
      expect(existsSync(join(root, "in.txt"))).toBe(true)
      expect(existsSync(join(workdir, "out.txt"))).toBe(false)
      // Both live under the host's /tmp, which is private to the sandbox outside the root.
      expect(outcome.stdout).toContain(`${workdir}/out.txt: No such file or directory`)
      rmSync(root, { recursive: true, force: true })
    }))

  it.live("the host's credentials are not readable from /proc with --contain (they are without)", () =>
    Effect.gen(function*() {
      const secret = { AWS_SECRET_ACCESS_KEY: "s" }
      expect((yield* run(["--", readSecret], secret)).stdout).toBe("1\n")
      expect((yield* run(["--contain", "--", readSecret], secret)).stdout).toBe("0\n[exit code: 1]\n")
    }))

  it.live("--network none applies only with --sandbox", () =>
    Effect.gen(function*() {
      const outcome = yield* run(["--network", "none", "--", "true"])
      expect(outcome.code).not.toBe(0)
      expect(outcome.stderr).toContain("--network: applies only with --sandbox")
    }))
})


describe("effect-bash run: sandbox texts for a CLI user", () => {
  it.live("an invalid --sandbox value names the flag and the choices, and exits 2", () =>
    Effect.gen(function*() {
      const outcome = yield* run(["--sandbox", "readonly", "--", "true"])
      expect(outcome).toMatchObject({
        code: 2,
        stderr: "effect-bash: --sandbox: expected one of read-only, workspace-write, danger-full-access, got \"readonly\"\n"
      })
    }))

  it.live("a missing bubblewrap: the exact refusal, then the path tried and what to do, and no log line", () =>
    Effect.gen(function*() {
      const outcome = yield* run(["--sandbox", "read-only", "--", "echo ran"], { EFFECT_BASH_BWRAP_PATH: "/nonexistent/bwrap" })
      expect(outcome.stdout).toBe("")
      expect(outcome.stderr.split("\n")).toEqual([
        `Error: ${sandboxUnavailableText("read-only")}`,
        "effect-bash: bubblewrap could not be started as \"/nonexistent/bwrap\"; effect-bash confines commands with " +
        "bubblewrap on Linux: install it (Debian/Ubuntu: apt-get install bubblewrap), set EFFECT_BASH_BWRAP_PATH to its " +
        "path, or run unconfined with --sandbox danger-full-access",
        ""
      ])
    }))

  it.live("--log-level brings the runner's warning back", () =>
    Effect.gen(function*() {
      const outcome = yield* run(["--log-level", "warning", "--sandbox", "read-only", "--", "true"], {
        EFFECT_BASH_BWRAP_PATH: "/nonexistent/bwrap"
      })
      expect(outcome.stderr).toContain("level=WARN")
      expect(outcome.stderr).toContain("sandbox runner unusable: spawn /nonexistent/bwrap ENOENT")
    }))
})
