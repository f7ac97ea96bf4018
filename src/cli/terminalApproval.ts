/**
 * Sandbox escalations of `effect-bash run` approved on the terminal: the question goes to the
 * controlling terminal (`/dev/tty`), not to stdout or stderr, so it reaches the person at the
 * keyboard even when a program reads `run`'s output, and the answer is read from there too.
 */
import * as Effect from "effect/Effect"
import * as fs from "node:fs"
import * as readline from "node:readline"
import * as tty from "node:tty"
import * as ApprovalCallback from "../layers/ApprovalCallback.js"
import type { Approval } from "../services/Approval.js"
import { runFacts, shownCommand, shownJustification } from "../tool/internal/approvalText.js"
import { networkApprovalTexts } from "../tool/internal/networkApprovalTexts.js"

/**
 * A terminal to ask on: writes `question` and reads one line of answer (without its newline), or
 * undefined when the input ends first or `signal` aborts (the question is then withdrawn). Rejects
 * when there is no terminal to ask on.
 */
export interface TerminalPort {
  readonly ask: (question: string, signal: AbortSignal) => Promise<string | undefined>
}

/**
 * The question for one escalation: the model's justification on one line, where and how the command
 * would run (one indented line each), then `allow escalation to <mode> for: <command>? [y/N] `.
 */
const question = (request: Approval.Request): string =>
  `effect-bash: a sandbox escalation is requested: ${shownJustification(request)}\n` +
  runFacts(request).map(([label, value]) => `  ${label.toLowerCase()}: ${value}\n`).join("") +
  `allow escalation to ${request.mode} for: ${shownCommand(request)}? [y/N] `

/**
 * The answer as an approval: `y` or `yes` (any case) allows this call once; any other line rejects
 * (the default is no); the end of input cancels.
 */
const outcomeOf = (answer: string | undefined): Approval.Outcome =>
  answer === undefined ? "cancelled" : /^\s*y(es)?\s*$/i.test(answer) ? "allowed-once" : "rejected"

/**
 * Options of {@link make}.
 */
export interface Options {
  /** How long the user may take (by the Clock); no answer by then counts as `cancelled`. */
  readonly timeoutMs: number
}

/**
 * Approval asked on `terminal`: see {@link outcomeOf}; no answer within `timeoutMs` → `cancelled`
 * (the question is withdrawn); no terminal to ask on → `unavailable`.
 */
export const make = (terminal: TerminalPort, options: Options): Approval["Type"] => {
  const ask = Effect.fn("Cli.approvalPrompt")(function*(request: Approval.Request) {
    yield* Effect.annotateCurrentSpan({ "sandbox.requested": request.mode })
    return yield* Effect.tryPromise((signal) => terminal.ask(question(request), signal)).pipe(
      Effect.map(outcomeOf),
      Effect.catchAll((error) =>
        Effect.logWarning("run: no terminal to ask for the escalation on", error.cause).pipe(
          Effect.as<Approval.Outcome>("unavailable")
        )
      )
    )
  })
  const askNetwork = Effect.fn("Cli.networkApprovalPrompt")(function*(request: Approval.NetworkRequest) {
    return yield* Effect.tryPromise((signal) => terminal.ask(networkApprovalTexts.terminal(request), signal)).pipe(
      Effect.map(networkOutcomeOf),
      Effect.catchAll((error) =>
        Effect.logWarning("run: no terminal to ask for network access on", error.cause).pipe(
          Effect.as<Approval.NetworkOutcome>("unavailable")
        )
      )
    )
  })
  return ApprovalCallback.make((request) => ask(request), { timeoutMs: options.timeoutMs, askNetwork: (request) => askNetwork(request) })
}

/**
 * A network answer: `y` or `yes` allows this command, `s` or `session` the session too (any case);
 * any other line rejects (the default is no); the end of input cancels.
 */
const networkOutcomeOf = (answer: string | undefined): Approval.NetworkOutcome =>
  answer === undefined
    ? "cancelled"
    : /^\s*y(es)?\s*$/i.test(answer)
    ? "allowed-once"
    : /^\s*s(ession)?\s*$/i.test(answer)
    ? "allowed-for-session"
    : "rejected"

/**
 * The controlling terminal, opened for each question and closed after it. The terminal stays in its
 * line mode: the kernel echoes and edits the line, and Ctrl-C interrupts `run` as usual.
 */
export const controllingTerminal: TerminalPort = {
  ask: (text, signal) =>
    new Promise((resolve, reject) => {
      let fd: number | undefined
      try {
        fd = fs.openSync("/dev/tty", "r+")
        fs.writeSync(fd, text)
      } catch (error) {
        if (fd !== undefined) fs.closeSync(fd)
        reject(error)
        return
      }
      const terminal = fd
      const input = new tty.ReadStream(terminal)
      const lines = readline.createInterface({ input, terminal: false })
      let settled = false
      const finish = (answer: string | undefined) => {
        if (settled) return
        settled = true
        signal.removeEventListener("abort", withdraw)
        lines.close()
        input.destroy()
        resolve(answer)
      }
      // A question withdrawn or ended by the end of input (Ctrl-D, which the terminal does not echo):
      // the next output starts on a line of its own.
      const withdraw = () => {
        if (settled) return
        try {
          fs.writeSync(terminal, "\n")
        } catch {
          // The terminal is gone; nothing to tidy.
        }
        finish(undefined)
      }
      if (signal.aborted) return withdraw()
      signal.addEventListener("abort", withdraw, { once: true })
      lines.once("line", (line) => finish(line))
      lines.once("close", withdraw)
    })
}
