import { describe, expect, it } from "@effect/vitest"
import type { BashExecutor } from "../../src/services/BashExecutor.js"
import type { Tasks } from "../../src/services/Tasks.js"
import { bashRunResult } from "../../src/testing/ScriptedBashExecutor.js"
import { foldCarriageReturns, modelText, stripAnsi, tailText } from "../../src/tool/modelText.js"
import { renderBackgroundRead } from "../../src/tool/renderBackgroundRead.js"
import * as BashTool from "../../src/tool/BashTool.js"
import { renderBackgroundStart, renderForeground } from "../../src/tool/renderBashResult.js"
import { escalationHint } from "../../src/tool/sandboxNotices.js"
import { renderTaskKill, renderTaskList, renderTaskNotice, renderTaskOutput, statusLine } from "../../src/tool/taskTexts.js"

const out = (text: string, truncated = false, spillPath?: string) =>
  spillPath === undefined ? { text, truncated } : { text, truncated, spillPath }

const render = (overrides: Partial<BashExecutor.RunResult>, escalationOffered = false) =>
  renderForeground(bashRunResult(overrides), escalationOffered)

describe("foreground rendering: the reference's examples, verbatim", () => {
  it("hello\\n", () => expect(render({ stdout: out("hello\n") })).toBe("hello\n"))
  it("(no output)", () => expect(render({})).toBe("(no output)"))
  it("out + [stderr] + err", () =>
    expect(render({ stdout: out("out\n"), stderr: out("err\n") })).toBe("out\n[stderr]\nerr\n"))
  it("failing with exit 3", () => expect(render({ stdout: out("failing\n"), exitCode: 3 })).toBe("failing\n[exit code: 3]"))
  it("timed out and killed", () =>
    expect(render({ timedOut: true, timeoutMs: 100, signal: "SIGTERM", exitCode: null })).toBe(
      "(no output)\n[timed out after 100ms]\n[killed by signal: SIGTERM]"
    ))
  it("truncated with no spill file", () =>
    expect(render({ stdout: out("tail", true) })).toBe("tail\n[output truncated; full output: (unavailable)]"))
})

describe("foreground rendering rules", () => {
  it("names the spill file of a truncated stream", () =>
    expect(render({ stdout: out("tail\n", true, "/spill/out") })).toBe(
      "tail\n\n[output truncated; full output: /spill/out]"
    ))

  it("applies the truncation rule to stderr too, inside its section", () =>
    expect(render({ stdout: out("o"), stderr: out("e", true, "/spill/err") })).toBe(
      "o\n[stderr]\ne\n[output truncated; full output: /spill/err]"
    ))

  it("starts the [stderr] section on a new line after unterminated stdout", () =>
    expect(render({ stdout: out("out"), stderr: out("err\n") })).toBe("out\n[stderr]\nerr\n"))

  it("shows stderr alone under [stderr]", () => expect(render({ stderr: out("err\n") })).toBe("[stderr]\nerr\n"))

  it("a zero exit adds no marker; a non-zero one is still a plain result line", () => {
    expect(render({ stdout: out("ok\n"), exitCode: 0 })).toBe("ok\n")
    expect(render({ stdout: out("no newline"), exitCode: 1 })).toBe("no newline\n[exit code: 1]")
  })

  it("a command that traps SIGTERM and exits 0 after its timeout shows the timeout and no exit marker", () =>
    expect(render({ stdout: out("bye\n"), timedOut: true, timeoutMs: 250, exitCode: 0 })).toBe(
      "bye\n[timed out after 250ms]"
    ))

  it("a signal wins over the exit code and is the last line", () =>
    expect(render({ exitCode: 137, signal: "SIGKILL" })).toBe("(no output)\n[killed by signal: SIGKILL]"))

  it("orders sandbox denial, escalation hint, timeout, then exit status", () =>
    expect(
      render({
        stderr: out("bash: /etc/x: Permission denied\n"),
        sandbox: { mode: "workspace-write", denied: true },
        timedOut: true,
        timeoutMs: 5,
        exitCode: 1
      }, true)
    ).toBe(
      "[stderr]\nbash: /etc/x: Permission denied\n" +
        "[sandbox: file access denied under workspace-write mode]\n" +
        escalationHint + "\n" +
        "[timed out after 5ms]\n" +
        "[exit code: 1]"
    ))

  it("the escalation hint is exact and appears only when escalation is offered", () => {
    expect(escalationHint).toBe(
      "[sandbox: escalation available — retry this exact command once with sandbox_permissions (the narrowest wider mode that suffices) + justification; the approval prompt asks the user]"
    )
    expect(render({ sandbox: { mode: "read-only", denied: true }, exitCode: 1 }, false)).toBe(
      "(no output)\n[sandbox: file access denied under read-only mode]\n[exit code: 1]"
    )
  })

  it("a runner failure replaces the denial and the hint, and stays before the exit marker", () =>
    expect(render({ sandbox: { mode: "workspace-write", denied: true, runnerFailed: true }, exitCode: 1 }, true)).toBe(
      "(no output)\n" +
        "[sandbox: the sandbox runner itself failed under workspace-write mode — the command did not run; this is a sandbox problem, not a command failure]\n" +
        "[exit code: 1]"
    ))

  it("no escalation hint under danger-full-access: there is no wider mode", () =>
    expect(render({ sandbox: { mode: "danger-full-access", denied: true }, exitCode: 1 }, true)).toBe(
      "(no output)\n[sandbox: file access denied under danger-full-access mode]\n[exit code: 1]"
    ))

  it("no sandbox line when nothing was denied", () =>
    expect(render({ stdout: out("x\n"), sandbox: { mode: "workspace-write", denied: false } }, true)).toBe("x\n"))

  it("background start is exactly `started background task <id>`", () => {
    expect(renderBackgroundStart("bash-1")).toBe("started background task bash-1")
    expect(BashTool.render({ kind: "background", taskId: "bash-7" }, false)).toBe("started background task bash-7")
  })
})

describe("model text (Beyond): escapes, progress, cut sequences", () => {
  it("removes CSI colour and cursor sequences", () => {
    expect(stripAnsi("\x1b[1;31mred\x1b[0m plain\x1b[2K\x1b[1A\n")).toBe("red plain\n")
    expect(render({ stdout: out("\x1b[32mPASS\x1b[39m\n") })).toBe("PASS\n")
  })

  it("removes OSC titles and hyperlinks (BEL and ST terminated)", () => {
    expect(stripAnsi("\x1b]0;my title\x07hi\n")).toBe("hi\n")
    expect(stripAnsi("\x1b]8;;https://example.com\x1b\\link\x1b]8;;\x1b\\\n")).toBe("link\n")
  })

  it("drops an unfinished sequence at the end and stray ESC bytes", () => {
    expect(stripAnsi("done\x1b[3")).toBe("done")
    expect(stripAnsi("a\x1b")).toBe("a")
  })

  it("folds carriage-return progress, keeping \\r\\n line endings exactly", () => {
    expect(foldCarriageReturns("10%\r50%\r100%\n")).toBe("100%\n")
    expect(foldCarriageReturns("a\r\nb\r\n")).toBe("a\r\nb\r\n")
    expect(foldCarriageReturns("start\n10%\r100%\r\ndone\n")).toBe("start\n100%\r\ndone\n")
    expect(render({ stdout: out("10%\r50%\r100%\n") })).toBe("100%\n")
  })

  it("a trailing \\r erases nothing (a terminal still shows the line)", () =>
    expect(foldCarriageReturns("loading 100%\r")).toBe("loading 100%"))

  it("drops a sequence the tail cut split in half, only in a truncated stream", () => {
    expect(modelText("[31mred\x1b[0m\n", true)).toBe("red\n")
    expect(modelText("1;32mgreen\x1b[0m\n", true)).toBe("green\n")
    expect(modelText(";;https://example.com\x07link\n", true)).toBe("link\n")
    expect(render({ stdout: out("31mtail\x1b[0m\n", true) })).toBe(
      "tail\n\n[output truncated; full output: (unavailable)]"
    )
  })

  it("a truncated tail starts at its first line when that line starts within 1 KiB; the value keeps the raw tail", () => {
    const lines = Array.from({ length: 6000 }, (_, n) => `line ${n}`).join("\n") + "\n"
    // The byte budget cut `line 123` after its first four characters.
    const tail = lines.slice(lines.indexOf("line 123") + 4)
    const run = bashRunResult({ stdout: out(tail, true, "/spill/out") })
    expect(renderForeground(run, false)).toBe(
      `${tail.slice(tail.indexOf("\n") + 1)}\n[output truncated; full output: /spill/out]`
    )
    expect(renderForeground(run, false).startsWith("line 124\n")).toBe(true)
    expect(run.stdout.text.startsWith(" 123\n")).toBe(true)
    // Exactly at the limit: a break at index 1023 is taken, one at 1024 is not.
    const body = "x\n".repeat(5000)
    expect(tailText(`${"é".repeat(1023)}\n${body}`)).toBe(body)
    expect(tailText(`${"é".repeat(1024)}\n${body}`)).toBe(`${"é".repeat(1024)}\n${body}`)
  })

  it("a tail whose first break lies past an eighth of it is kept whole, less a split escape sequence", () => {
    expect(tailText("partial first line\nsecond\n")).toBe("partial first line\nsecond\n")
    expect(tailText("[31mred\x1b[0m\n")).toBe("red\n")
    // Within reach, the partial line goes, and the escape sequence the cut split goes with it.
    const rest = "ok\n".repeat(100)
    expect(tailText(`;1m\x1b[0m cut\n${rest}`)).toBe(rest)
    expect(tailText(`\u00e9\u{1F600} cut\r\n${rest}`)).toBe(rest)
    // A later line that only looks like a remnant is kept: it starts a line.
    expect(tailText(`cut\n[1m bold?\n${rest}\x1b[0m`)).toBe(`[1m bold?\n${rest}`)
  })

  it("leaves text that only looks like a remnant alone", () => {
    expect(modelText("[31mnot cut\n", false)).toBe("[31mnot cut\n")
    expect(modelText("10ms elapsed\n", true)).toBe("10ms elapsed\n")
    expect(modelText("[1] 12345\n\x1b[0m", true)).toBe("[1] 12345\n")
    expect(modelText("[INFO] ok\n\x1b[0m", true)).toBe("[INFO] ok\n")
  })

  // A quadratic cleaner took ~13 s on 256 KiB of U+009D (each byte restarted a scan to the end of the
  // text), past this test's time limit; a linear one takes milliseconds (see bench item f).
  it("cleans 256 KiB of never-terminated string introducers (U+009D, ESC ], DCS) exactly", () => {
    const size = 256 * 1024
    const c1 = "\u009d".repeat(size)
    expect(modelText(c1, true)).toBe(c1) // no terminator: not a sequence, kept as it came
    expect(modelText(`${c1}\x07after\n`, true)).toBe("after\n") // one sequence, ended by BEL
    expect(modelText(`${"\u009d".repeat(size / 2)}\x1b\\mid${"\u0090x".repeat(size / 4)}\x1b\\end`, false)).toBe("midend")
    expect(modelText("\x1b]".repeat(size / 2), true)).toBe("]".repeat(size / 2 - 1))
    const mixed = `\u009b31m${"\u009d\u0090".repeat(size / 4)}\x1b[0m`
    expect(modelText(mixed, false)).toBe("\u009d\u0090".repeat(size / 4))
  })

  it("agrees with the regular-expression definition of the sequences on 100,000 random short texts", () => {
    // The definition the scanner implements (and the cleaner used before it was made linear).
    const escapeSequence =
      /(?:\x1b[P\]X^_]|[\u0090\u009d\u0098\u009e\u009f])[^\x07\x1b]*(?:\x07|\x1b\\)|(?:\x1b\[|\u009b)[0-?]*[ -/]*[@-~]|\x1b[ -/]+[0-~]|\x1b[0-OQ-WYZ\\`-~]/g
    const unfinished = /(?:\x1b[P\]X^_][^\x07\x1b]*|(?:\x1b\[|\u009b)[0-?]*[ -/]*|\x1b[ -/]*)$/
    const reference = (text: string) => text.replace(escapeSequence, "").replace(unfinished, "").replace(/\x1b/g, "")
    const alphabet = [..."\x1b\x07\u009b\u009d\u0090\u0098\u009e\u009f\u0091[]\\PX^_01;? /!mAa@~`\r\n(B\x7f"]
    let seed = 42
    const next = () => (seed = (seed * 1103515245 + 12345) & 0x7fffffff) % alphabet.length
    for (let round = 0; round < 100_000; round++) {
      const text = Array.from({ length: next() % 16 }, () => alphabet[next()]).join("")
      if (stripAnsi(text) !== reference(text)) expect(stripAnsi(text)).toBe(reference(text))
    }
  })
})

describe("background reads", () => {
  const read = (overrides: Partial<BashExecutor.OutputRead>): BashExecutor.OutputRead => ({ delta: "", lossy: false, ...overrides })

  it("renders the delta as is (made model-readable)", () => {
    expect(renderBackgroundRead(read({ delta: "out\n[stderr]\nerr\n" }))).toBe("out\n[stderr]\nerr\n")
    expect(renderBackgroundRead(read({ delta: "\x1b[33mwarn\x1b[0m\n" }))).toBe("warn\n")
    expect(renderBackgroundRead(read({}))).toBe("")
  })

  it("adds the lossy notice on its own line, with the spill paths joined by \", \"", () => {
    expect(renderBackgroundRead(read({ delta: "tail", lossy: true, stdoutSpillPath: "/s/out", stderrSpillPath: "/s/err" })))
      .toBe("tail\n[some output was dropped from memory; full output: /s/out, /s/err]")
    expect(renderBackgroundRead(read({ delta: "tail\n", lossy: true, stderrSpillPath: "/s/err" })))
      .toBe("tail\n[some output was dropped from memory; full output: /s/err]")
  })

  it("reports (unavailable) when a lossy read has no spill file", () =>
    expect(renderBackgroundRead(read({ lossy: true }))).toBe(
      "[some output was dropped from memory; full output: (unavailable)]"
    ))

  it("puts sandbox notices after the lossy notice", () =>
    expect(renderBackgroundRead(read({ delta: "x", lossy: true }), ["[sandbox: file access denied under read-only mode]"]))
      .toBe(
        "x\n[some output was dropped from memory; full output: (unavailable)]\n[sandbox: file access denied under read-only mode]"
      ))
})

describe("task texts", () => {
  const task = (overrides: Partial<Tasks.Snapshot>): Tasks.Snapshot => ({
    id: "bash-1",
    kind: "bash",
    label: "npm run dev",
    owner: "s1",
    status: "running",
    detail: undefined,
    ...overrides
  })

  it("status lines with and without a detail", () => {
    expect(statusLine(task({}))).toBe("[status: running]")
    expect(statusLine(task({ status: "completed", detail: "exit code: 0" }))).toBe("[status: completed, exit code: 0]")
    expect(statusLine(task({ status: "killed", detail: "signal: SIGTERM" }))).toBe("[status: killed, signal: SIGTERM]")
    expect(statusLine(task({ status: "killed", detail: "killed before exit" }))).toBe("[status: killed, killed before exit]")
  })

  it("task_output: delta or (no new output), a newline if missing, then the status line", () => {
    expect(renderTaskOutput("", task({}))).toBe("(no new output)\n[status: running]")
    expect(renderTaskOutput("line\n", task({}))).toBe("line\n[status: running]")
    expect(renderTaskOutput("partial", task({ status: "completed", detail: "exit code: 2" }))).toBe(
      "partial\n[status: completed, exit code: 2]"
    )
  })

  it("task_list: (no background tasks) or `<id> [<kind>] <status> — <label>` lines", () => {
    expect(renderTaskList([])).toBe("(no background tasks)")
    expect(renderTaskList([task({}), task({ id: "bash-2", label: "sleep 5", status: "stopping" })])).toBe(
      "bash-1 [bash] running — npm run dev\nbash-2 [bash] stopping — sleep 5"
    )
  })

  it("task_kill texts", () => {
    expect(renderTaskKill("requested", task({}))).toBe("requested cancellation of task bash-1")
    expect(renderTaskKill("already-finished", task({ status: "completed", detail: "exit code: 0" }))).toBe(
      "task bash-1 had already finished [status: completed, exit code: 0]"
    )
  })

  it("the completion notice", () =>
    expect(renderTaskNotice({ owner: "s1", task: task({ status: "completed", detail: "exit code: 0" }) })).toBe(
      "background task bash-1 (bash: npm run dev) finished [status: completed, exit code: 0]. Read its output with task_output."
    ))
})
