/**
 * `effect-bash run --sandbox … --sandbox-permissions MODE --justification TEXT`: the escalation is
 * approved on the terminal. The built CLI runs in a pseudo-terminal made by python3's `pty` module
 * (`fixtures/onpty.py`; the test's input is what the user types), which reads the terminal to its end
 * however fast the program ends; without a terminal no approval is composed.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { spawn, spawnSync } from "node:child_process"
import * as http from "node:http"
import { existsSync, mkdtempSync, readFileSync, realpathSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll } from "vitest"
import { bwrapUsable, socatUsable } from "../support/bwrap.js"
import { listenLoopback } from "../support/networkSites.js"
import { cleanEnv, cliPath, runCli } from "../support/cli.js"

const ptyUsable = spawnSync("python3", ["-c", "import pty"]).status === 0
const onPty = join(import.meta.dirname, "..", "support", "fixtures", "onpty.py")

const workdir = mkdtempSync(join(tmpdir(), "effect-bash-cli-prompt-"))
afterAll(() => rmSync(workdir, { recursive: true, force: true }))

const quote = (word: string) => `'${word.replaceAll("'", "'\\''")}'`

const justification = "It writes the report."

/** `run` with these arguments in a pseudo-terminal; `typed` is sent as keystrokes; `redirect` is shell redirections. */
const inTerminal = (args: ReadonlyArray<string>, typed: string, redirect = "") =>
  Effect.promise(() =>
    new Promise<{ readonly code: number | null; readonly screen: string }>((resolve, reject) => {
      const line = [process.execPath, cliPath, "run", "--workdir", workdir, ...args].map(quote).join(" ") + redirect
      const child = spawn("python3", [onPty, typed, line], { env: cleanEnv(), stdio: ["ignore", "pipe", "inherit"] })
      let screen = ""
      child.stdout.setEncoding("utf8").on("data", (chunk: string) => (screen += chunk))
      // The driver kills the program after 30 s; this bounds the driver itself.
      const limit = setTimeout(() => child.kill("SIGKILL"), 40_000)
      child.on("error", reject)
      child.on("close", (code) => {
        clearTimeout(limit)
        resolve({ code, screen: screen.replaceAll("\r\n", "\n") })
      })
    })
  )

const escalate = (command: string, ...flags: ReadonlyArray<string>) => [
  "--sandbox",
  "read-only",
  ...flags,
  "--sandbox-permissions",
  "workspace-write",
  "--justification",
  justification,
  "--",
  command
]

// Where and how the command runs: run's workdir (its real path, as the sandbox places it) and default timeout.
const question = (command: string) =>
  `effect-bash: a sandbox escalation is requested: ${justification}\n` +
  `  working directory: ${realpathSync(workdir)}\n` +
  `  runs: in the foreground, stopped after 120000 ms\n` +
  `allow escalation to workspace-write for: ${command}? [y/N] `

describe.skipIf(!bwrapUsable || !ptyUsable)("effect-bash run: escalation approved on the terminal", () => {
  it.live("y runs the command once under the wider mode", () =>
    Effect.gen(function*() {
      const command = "echo hi > yes.txt && echo wrote"
      const { code, screen } = yield* inTerminal(escalate(command), "y\n")
      expect(screen).toContain(question(command))
      expect(screen.endsWith("wrote\n")).toBe(true)
      expect(code).toBe(0)
      expect(readFileSync(join(workdir, "yes.txt"), "utf8")).toBe("hi\n")
    }))

  it.live("n, an empty line (the default) and the end of input refuse with the exact texts; nothing runs", () =>
    Effect.gen(function*() {
      const answers = [
        ["n\n", "the user rejected escalating this command to \"workspace-write\""],
        ["\n", "the user rejected escalating this command to \"workspace-write\""],
        ["\u0004", "approval for escalating to \"workspace-write\" was cancelled"]
      ] as const
      for (const [typed, refusal] of answers) {
        const { code, screen } = yield* inTerminal(escalate("echo hi > no.txt"), typed)
        expect(screen).toContain(question("echo hi > no.txt"))
        expect(screen).toContain(`Error: ${refusal}\n`)
        // The terminal echoes no Ctrl-D: the refusal still starts a line of its own.
        if (typed === "\u0004") expect(screen).toContain(`${question("echo hi > no.txt")}\nError: ${refusal}\n`)
        expect(code).toBe(125)
        expect(existsSync(join(workdir, "no.txt"))).toBe(false)
      }
    }))

  it.live("no answer within --approval-timeout-ms cancels, and the question is left on a line of its own", () =>
    Effect.gen(function*() {
      const { code, screen } = yield* inTerminal(escalate("echo hi > late.txt", "--approval-timeout-ms", "300"), "")
      expect(screen).toContain(`${question("echo hi > late.txt")}\nError: approval for escalating to "workspace-write" was cancelled\n`)
      expect(code).toBe(125)
      expect(existsSync(join(workdir, "late.txt"))).toBe(false)
    }))

  it.live("on a terminal a denial offers the escalation; the model's text cannot hide the question", () =>
    Effect.gen(function*() {
      const denied = yield* inTerminal(["--sandbox", "read-only", "--", "echo hi > hint.txt"], "")
      expect(denied.screen).toContain(
        "[sandbox: file access denied under read-only mode]\n" +
          "[sandbox: escalation available — retry this exact command once with sandbox_permissions (the narrowest wider mode that suffices) + justification; the approval prompt asks the user]\n"
      )
      const sneaky = "echo hi > sneaky.txt\u001b[2K\r"
      const { screen } = yield* inTerminal(escalate(sneaky), "n\n")
      expect(screen).toContain("allow escalation to workspace-write for: echo hi > sneaky.txt\\u{1B}[2K\\r? [y/N] ")
    }))

  it.live("stdin not a terminal: no approval unless --approve-prompt, which asks on /dev/tty", () =>
    Effect.gen(function*() {
      const command = "echo hi > piped.txt && echo wrote"
      const refused = yield* inTerminal(escalate(command), "y\n", " </dev/null")
      expect(refused.screen).toContain(
        "Error: sandbox escalation to \"workspace-write\" requires approval, but no approval service is composed\n"
      )
      expect(refused.screen).not.toContain("[y/N]")
      expect(existsSync(join(workdir, "piped.txt"))).toBe(false)
      const asked = yield* inTerminal(escalate(command, "--approve-prompt"), "y\n", " </dev/null")
      expect(asked.screen).toContain(question(command))
      expect(asked.code).toBe(0)
      expect(readFileSync(join(workdir, "piped.txt"), "utf8")).toBe("hi\n")
    }))

  it.live("no terminal at all: refused as without approval, even with --approve-prompt (no channel)", () =>
    Effect.gen(function*() {
      const plain = yield* Effect.promise(() => runCli(["run", "--workdir", workdir, ...escalate("echo hi > none.txt")]))
      expect(plain).toMatchObject({
        code: 125,
        stderr: "Error: sandbox escalation to \"workspace-write\" requires approval, but no approval service is composed\n"
      })
      // A session of its own has no controlling terminal, whatever terminal the tests run in.
      const forced = yield* Effect.promise(() =>
        new Promise<{ readonly code: number | null; readonly stderr: string }>((resolve, reject) => {
          const child = spawn(
            process.execPath,
            [cliPath, "run", "--workdir", workdir, ...escalate("echo hi > none.txt", "--approve-prompt")],
            { env: cleanEnv(), stdio: ["ignore", "ignore", "pipe"], detached: true }
          )
          let stderr = ""
          child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk))
          const limit = setTimeout(() => child.kill("SIGKILL"), 30_000)
          child.on("error", reject)
          child.on("close", (code) => {
            clearTimeout(limit)
            resolve({ code, stderr })
          })
        })
      )
      expect(forced.code).toBe(125)
      expect(forced.stderr).toContain(
        "Error: sandbox escalation to \"workspace-write\" requires approval, but no approval channel is available\n"
      )
      expect(existsSync(join(workdir, "none.txt"))).toBe(false)
    }))

  it.live("--approve-prompt without --sandbox is a usage error", () =>
    Effect.gen(function*() {
      const outcome = yield* Effect.promise(() => runCli(["run", "--workdir", workdir, "--approve-prompt", "--", "true"]))
      expect(outcome).toMatchObject({ code: 2, stderr: "effect-bash: --approve-prompt: applies only with --sandbox\n" })
    }))
})

describe.skipIf(!bwrapUsable || !ptyUsable || !socatUsable)("effect-bash run --network-access: names approved on the terminal", () => {
  const server = http.createServer((request, response) => response.end(`page of ${request.headers.host}\n`))
  afterAll(() => new Promise((resolve) => server.close(resolve)))

  it.live("y lets the command reach the name; n refuses with the exact text", () =>
    Effect.gen(function*() {
      const port = yield* Effect.promise(() => listenLoopback(server))
      const command = `curl -s http://other.test:${port}/`
      const ask = [
        "--sandbox", "read-only", "--network-allow", "example.test", "--network-host", "other.test=127.0.0.1",
        "--network-access", "other.test", "--justification", justification, "--", command
      ]
      const question = `effect-bash: network access is requested: ${justification}\n` +
        `  working directory: ${realpathSync(workdir)}\n` +
        `  runs: in the foreground, stopped after 120000 ms\n` +
        `allow reaching other.test for: ${command}? [y = this command, s = this session, N = no] `
      const allowed = yield* inTerminal(ask, "y\n")
      expect(allowed.screen).toContain(question)
      expect(allowed.screen.endsWith(`page of other.test:${port}\n`)).toBe(true)
      expect(allowed.code).toBe(0)
      const refused = yield* inTerminal(ask, "n\n")
      expect(refused.screen).toContain(question)
      expect(refused.screen).toContain("Error: the user rejected network access to other.test\n")
      expect(refused.code).toBe(125)
    }))
})
