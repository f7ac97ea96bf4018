/**
 * `effect-bash run [flags] [--] <command...>`: one command through the whole tool stack, printing
 * exactly what a model would read (or, with `--json`, the canonical value as JSON with that text as
 * its `text` key) and a final newline,
 * exiting with a code that mirrors the command's (see `exit.ts`).
 */
import * as Args from "@effect/cli/Args"
import * as Command from "@effect/cli/Command"
import * as Options from "@effect/cli/Options"
import * as FileSystem from "@effect/platform/FileSystem"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { AgentTools } from "../services/AgentTools.js"
import { Approval } from "../services/Approval.js"
import type { BashExecutor } from "../services/BashExecutor.js"
import { sandboxUnavailableText } from "../services/BashExecutor.js"
import type * as BashTool from "../tool/BashTool.js"
import { renderForegroundOutput, truncationNotices } from "../tool/renderBashResult.js"
import { ExitCode, runExitCode, toolErrorExitCode } from "./exit.js"
import { writeStderr, writeStdout } from "./output.js"
import type { FlagNames } from "./runArgv.js"
import { requiresSandbox, resolveSettings, settingsFlagNames, settingsOptions } from "./settings.js"
import { cliStack } from "./stack.js"
import * as TerminalApproval from "./terminalApproval.js"

const json = Options.boolean("json").pipe(
  Options.withDescription(
    "Print the bash tool's canonical result value as one line of JSON, with the text the model reads as its \"text\" key"
  )
)

const description = Options.text("description").pipe(
  Options.withPseudoName("TEXT"),
  Options.withDescription("The bash tool's description field (what a UI shows)"),
  Options.withDefault("Run a command from the effect-bash CLI")
)

const sandboxPermissions = Options.text("sandbox-permissions").pipe(
  Options.withPseudoName("MODE"),
  Options.withDescription(
    "Ask to run this one command in a wider sandbox mode (workspace-write or danger-full-access), as the bash tool's sandbox_permissions; needs --justification and the user's approval"
  ),
  Options.optional
)

const justification = Options.text("justification").pipe(
  Options.withPseudoName("TEXT"),
  Options.withDescription("Why the command needs the wider mode, shown to the user who approves it"),
  Options.optional
)

const networkAccess = Options.text("network-access").pipe(
  Options.withPseudoName("NAME"),
  Options.withDescription(
    "Ask for this one command to reach a name beyond --network-allow, as the bash tool's network_access; repeatable; needs --justification and the user's approval"
  ),
  Options.repeated
)

const approvePrompt = Options.boolean("approve-prompt").pipe(
  Options.withDescription(
    "Ask for escalation approval on the terminal (/dev/tty) even when stdin or stderr is not one (it is asked when both are)"
  )
)

const command = Args.text({ name: "command" }).pipe(
  Args.atLeast(1),
  Args.withDescription("The command; its words are joined with spaces and run by `bash -c`")
)

/**
 * The flags `run` accepts (see `runArgv.ts`).
 */
export const runFlagNames: FlagNames = {
  valued: ["description", "sandbox-permissions", "justification", "network-access", ...settingsFlagNames.valued],
  boolean: ["json", "approve-prompt", ...settingsFlagNames.boolean]
}

/**
 * How one `run` ended: the exit code to leave with and the spill files its output pointed at.
 */
export interface RunOutcome {
  readonly code: number
  readonly spillPaths: ReadonlyArray<string>
}

/**
 * After output shown live, what the text adds: truncation notices and markers, each on its line. The
 * whole text when nothing was shown (it is `(no output)` and the markers).
 */
const afterLiveOutput = (value: typeof BashTool.Foreground.Type, text: string, lastShown: string): string => {
  const output = renderForegroundOutput(value)
  if (lastShown === "" || output === "" || !text.startsWith(output)) return text
  const markers = text.slice(output.length).split("\n").filter((line) => line !== "")
  const trailer = [...truncationNotices(value), ...markers].map((line) => `${line}\n`).join("")
  return lastShown.endsWith("\n") ? trailer : `\n${trailer}`
}

const missingRunnerHint = (bwrapPath: string): string =>
  `effect-bash: bubblewrap could not be started as ${
    bwrapPath.includes("/") ? JSON.stringify(bwrapPath) : `${JSON.stringify(bwrapPath)} (searched on PATH)`
  }; effect-bash confines commands with bubblewrap on Linux: install it (Debian/Ubuntu: apt-get install bubblewrap), ` +
  `set EFFECT_BASH_BWRAP_PATH to its path, or run unconfined with --sandbox danger-full-access\n`

/**
 * Runs one command through the `bash` tool (no session, no background) and prints its result, ending
 * with a newline. With `live` (stdout is a terminal, no `--json`), the output is printed as the command
 * produces it (cleaned like model text) and only the truncation notices and markers follow.
 */
const runOnce = Effect.fn("Cli.run")(function*(input: {
  readonly command: string
  readonly description: string
  readonly json: boolean
  readonly live?: boolean
  /** The bash tool's escalation fields, as given (the tool checks them). */
  readonly escalation?: {
    readonly sandbox_permissions?: string
    readonly justification?: string
    readonly network_access?: ReadonlyArray<string>
  }
  /** The confined mode and the bubblewrap it runs with, to explain a refusal for want of a runner. */
  readonly sandbox?: { readonly mode: BashExecutor.SandboxMode; readonly bwrapPath: string }
}) {
  const tools = yield* AgentTools
  let lastShown = ""
  const live = input.live === true && !input.json
  const args: BashTool.Parameters = {
    command: input.command,
    description: input.description,
    // Checked by the tool, which names a bad value in its message.
    ...(input.escalation as Pick<BashTool.Parameters, "sandbox_permissions" | "justification" | "network_access"> | undefined)
  }
  const result = yield* tools.call("bash", args, {
    callId: "cli-run",
    // A stdout that stops taking text fails the final write, which ends the run.
    ...(live
      ? { onProgress: (text: string) => Effect.zipRight(Effect.sync(() => (lastShown = text)), Effect.ignore(writeStdout(text))) }
      : {})
  })
  if (result.isError) {
    yield* writeStderr(`${result.text}\n`)
    // The model's text names runners of other platforms; a CLI user is told what this package uses.
    if (input.sandbox !== undefined && result.message === sandboxUnavailableText(input.sandbox.mode)) {
      yield* writeStderr(missingRunnerHint(input.sandbox.bwrapPath))
    }
    return { code: toolErrorExitCode, spillPaths: [] } satisfies RunOutcome
  }
  const value = result.value
  // `run` never asks for the background: a started task would be a bug of the tool.
  if (value.kind === "background") return yield* Effect.dieMessage(`run started background task ${value.taskId}`)
  // The value's own keys stay where a reader of the value finds them; `text` is what the model reads.
  const full = input.json ? JSON.stringify({ ...result.value, text: result.text }) : result.text
  const text = live ? afterLiveOutput(value, full, lastShown) : full
  yield* writeStdout(text === "" || text.endsWith("\n") ? text : `${text}\n`)
  const spillPaths = [value.stdout.spillPath, value.stderr.spillPath].filter((path) => path !== undefined)
  return { code: runExitCode(value), spillPaths } satisfies RunOutcome
})

/**
 * After the stack has closed: a spill file the output pointed at is gone unless spill files are kept,
 * so say so rather than leave a dead path on the screen.
 */
const reportRemovedSpillFiles = (spillPaths: ReadonlyArray<string>) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    for (const path of spillPaths) {
      if (yield* fs.exists(path).pipe(Effect.orElseSucceed(() => false))) continue
      yield* writeStderr(`effect-bash: spill file removed on exit: ${path} (--keep-spill-files keeps it)\n`)
    }
  })

/**
 * Whether `run` under a sandbox asks for escalation approval on the terminal: with
 * `--approve-prompt`, or when stdin and stderr are both terminals (a person is there to answer).
 * Otherwise no approval is composed, and an escalation is refused for want of one.
 */
export const asksOnTerminal = (
  approvePrompt: boolean,
  streams: { readonly stdin: boolean; readonly stderr: boolean }
): boolean => approvePrompt || (streams.stdin && streams.stderr)

/**
 * The `run` subcommand.
 */
export const runCommand = Command.make(
  "run",
  { settings: settingsOptions, json, description, sandboxPermissions, justification, networkAccess, approvePrompt, command },
  (input) =>
    Effect.gen(function*() {
      const settings = yield* resolveSettings(input.settings)
      if (input.approvePrompt && settings.approval === undefined) {
        return yield* requiresSandbox("--approve-prompt")
      }
      const streams = { stdin: process.stdin.isTTY === true, stderr: process.stderr.isTTY === true }
      const approval = settings.approval !== undefined && asksOnTerminal(input.approvePrompt, streams)
        ? { approval: Layer.succeed(Approval, TerminalApproval.make(TerminalApproval.controllingTerminal, settings.approval)) }
        : {}
      const escalation = {
        ...(input.sandboxPermissions._tag === "Some" ? { sandbox_permissions: input.sandboxPermissions.value } : {}),
        ...(input.justification._tag === "Some" ? { justification: input.justification.value } : {}),
        ...(input.networkAccess.length === 0 ? {} : { network_access: input.networkAccess })
      }
      const outcome = yield* runOnce({
        command: input.command.join(" "),
        description: input.description,
        json: input.json,
        escalation,
        live: process.stdout.isTTY === true,
        ...(settings.sandbox?.sandboxMode === undefined ? {} : {
          sandbox: { mode: settings.sandbox.sandboxMode, bwrapPath: settings.executor.bwrapPath ?? "bwrap" }
        })
      })
        // One command: loading the posix_spawn binding would not pay.
        .pipe(Effect.provide(cliStack({ ...settings, executor: { ...settings.executor, directSpawn: true } }, {
          background: false,
          ...approval
        })))
      yield* reportRemovedSpillFiles(outcome.spillPaths)
      if (outcome.code !== 0) return yield* new ExitCode({ code: outcome.code })
    })
).pipe(Command.withDescription("Run one command through the bash tool and print what a model would read"))
