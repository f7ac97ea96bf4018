/**
 * What a human reads of an escalation, on the terminal and in an MCP client: where and how the command
 * would run, every invisible or reordering character shown as an escape, and the model's texts bounded
 * with a clear elision.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { shownBounded, shownLimits } from "../../src/tool/internal/approvalText.js"
import * as McpApproval from "../../src/cli/mcpApproval.js"
import * as TerminalApproval from "../../src/cli/terminalApproval.js"
import type { Approval } from "../../src/services/Approval.js"

const request: Approval.Request = {
  toolName: "bash",
  callId: "call-7",
  reason: "It cleans the build folder.",
  command: "rm -rf ./*",
  mode: "danger-full-access",
  workdir: "/home/me/other-project",
  background: false,
  timeoutMs: 120_000
}

/** The terminal question `request` gets. */
const terminalQuestion = (request: Approval.Request) =>
  Effect.gen(function*() {
    const questions: Array<string> = []
    const terminal: TerminalApproval.TerminalPort = {
      ask: (question) => {
        questions.push(question)
        return Promise.resolve("n")
      }
    }
    yield* TerminalApproval.make(terminal, { timeoutMs: 60_000 }).request(request)
    return questions[0]
  })

describe("the approval question", () => {
  it("in an MCP client names the working directory and the foreground run's time limit", () => {
    expect(McpApproval.elicitationMessage(request)).toBe(
      "Allow the bash tool to run this command once with the sandbox widened to \"danger-full-access\"?\n\n" +
        "Command: rm -rf ./*\n" +
        "Working directory: /home/me/other-project\n" +
        "Runs: in the foreground, stopped after 120000 ms\n" +
        "Justification (from the model): It cleans the build folder.\n\n" +
        "Accept runs it once under \"danger-full-access\"; decline leaves the sandbox as it is and the command does not run."
    )
  })

  it("in an MCP client says a background task has no time limit", () => {
    const { timeoutMs: _, ...background } = { ...request, background: true }
    expect(McpApproval.elicitationMessage(background)).toContain(
      "Working directory: /home/me/other-project\nRuns: in the background, as a task with no time limit\n"
    )
  })

  it.effect("on the terminal names them on lines of their own before [y/N]", () =>
    Effect.gen(function*() {
      expect(yield* terminalQuestion(request)).toBe(
        "effect-bash: a sandbox escalation is requested: It cleans the build folder.\n" +
          "  working directory: /home/me/other-project\n" +
          "  runs: in the foreground, stopped after 120000 ms\n" +
          "allow escalation to danger-full-access for: rm -rf ./*? [y/N] "
      )
      const { timeoutMs: _, ...background } = { ...request, background: true }
      expect(yield* terminalQuestion(background)).toContain(
        "  runs: in the background, as a task with no time limit\nallow escalation"
      )
    }))

  it.effect("a request without those facts (from another caller) is asked as before", () =>
    Effect.gen(function*() {
      const { background: _b, timeoutMs: _t, workdir: _w, ...bare } = request
      expect(yield* terminalQuestion(bare)).toBe(
        "effect-bash: a sandbox escalation is requested: It cleans the build folder.\n" +
          "allow escalation to danger-full-access for: rm -rf ./*? [y/N] "
      )
    }))

  it("escapes controls, separators, bidi and format characters, zero-width and default-ignorable ones", () => {
    const hidden = [
      "\u0000", "\u001b", "\u007f", "\u0085", "\u061c", "\u200b", "\u200d", "\u200e", "\u2028", "\u2029", "\u202e",
      "\u2060", "\u2062", "\u2066", "\ufeff", "\u3164", "\u115f", "\uffa0", "\u00ad", "\u034f", "\ufe0f", "\u00a0",
      "\u2003", "\u2800", "\u{e0000}", "\u{e0001}", "\u{e0041}", "\u{e007f}", "\u{e0100}", "\ud800"
    ].join("")
    expect(McpApproval.elicitationMessage({ ...request, command: `a${hidden}b`, reason: "x\ny", workdir: "/w\u202e/d" })).toContain(
      "Command: a\\u{0}\\u{1B}\\u{7F}\\u{85}\\u{61C}\\u{200B}\\u{200D}\\u{200E}\\u{2028}\\u{2029}\\u{202E}" +
        "\\u{2060}\\u{2062}\\u{2066}\\u{FEFF}\\u{3164}\\u{115F}\\u{FFA0}\\u{AD}\\u{34F}\\u{FE0F}\\u{A0}" +
        "\\u{2003}\\u{2800}\\u{E0000}\\u{E0001}\\u{E0041}\\u{E007F}\\u{E0100}\\u{D800}b\n" +
        "Working directory: /w\\u{202E}/d\n"
    )
    expect(McpApproval.elicitationMessage({ ...request, reason: "x\r\ny\tz" })).toContain(
      "Justification (from the model): x\\r\\ny\\tz\n"
    )
    // Visible text stays as it is: accents, other scripts, emoji, quotes, backslashes.
    const visible = "echo \"hé\" 'ß' 日本 😀 | tr '\\n' ' '"
    expect(shownBounded(visible, 100)).toBe(visible)
  })

  it("bounds the justification with an elision that counts what is not shown", () => {
    const long = "why ".repeat(200)
    const shown = McpApproval.elicitationMessage({ ...request, reason: long })
    expect(shown).toContain(`Justification (from the model): ${long.slice(0, shownLimits.justification)} … [300 more characters not shown]\n`)
  })

  it("bounds the command keeping its start and its end, where a payload could hide", () => {
    const command = `echo start; ${"x".repeat(10_000)}; rm -rf ~`
    const limit = shownLimits.command
    expect(shownBounded(command, limit, true)).toBe(
      `${command.slice(0, limit - limit / 4)} … [${command.length - limit} characters not shown] … ${command.slice(-limit / 4)}`
    )
    expect(McpApproval.elicitationMessage({ ...request, command })).toContain("characters not shown] … " + "x".repeat(100))
    expect(McpApproval.elicitationMessage({ ...request, command })).toContain("; rm -rf ~\nWorking directory: ")
  })

  it("counts escapes as shown, so invisible characters cannot lift the bound", () => {
    expect(shownBounded("\u200b".repeat(1000), 40)).toBe(`${"\\u{200B}".repeat(5)} … [995 more characters not shown]`)
    // An escape is never cut in half.
    expect(shownBounded(`ab${"\u200b".repeat(10)}`, 12)).toBe("ab\\u{200B} … [9 more characters not shown]")
  })
})
