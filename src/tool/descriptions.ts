/**
 * What the model reads about the tools: descriptions and the `tool:bash` prompt section, in our own
 * words. The marker names quoted here are the exact CONTRACT strings.
 *
 * @since 0.1.0
 */
import type { PromptSection } from "../services/AgentTools.js"

/**
 * The `bash` tool description; `sandbox` adds the escalation paragraph, `background` the paragraph on
 * background tasks.
 *
 * @since 0.1.0
 */
export const bashDescription = (options: { readonly background: boolean; readonly sandbox: boolean }): string => {
  const parts = [
    "Runs one command with `bash -c` in a fresh, non-interactive shell and returns what it printed. " +
    "Nothing carries over between calls (no cd, no variables, no functions): pass `workdir` instead of `cd`, " +
    "and chain dependent steps in one command. Stdin is empty, so nothing may wait for input, and anything " +
    "the command leaves running (`cmd &`) is stopped when it ends.",
    "The result is stdout, then stderr under a `[stderr]` line, or `(no output)`. Lines at the end report what " +
    "happened: `[timed out after <ms>ms]`, `[killed by signal: <SIG>]`, or `[exit code: <N>]` for a non-zero " +
    "exit (no exit line means it exited 0). Long output keeps its end; " +
    "`[output truncated; full output: <path>]` names a file holding all of it.",
    "Variables named `$DSH_*` are set by the harness for every command (for example `$DSH_HOME`, and " +
    "`$DSH_SESSION_ID` inside a session); read them, do not set them."
  ]
  if (options.background) {
    parts.push(
      "For a long-running command (a server, a watcher, a long build) set `run_in_background: true`: the call " +
      "answers at once with `started background task <id>`, no timeout applies, and you read its output with " +
      "`task_output` (which can wait for it to finish) and stop it with `task_kill`."
    )
  }
  if (options.sandbox) {
    parts.push(
      "Commands run inside a file sandbox. `[sandbox: file access denied under <mode> mode]` means the sandbox " +
      "refused a file access: a policy decision, not a bug in the command. Only after such a denial, and only " +
      "if a wider mode would let the command succeed, you may retry the same command once, in the same turn, " +
      "with `sandbox_permissions` set to the narrowest mode that suffices and a one-sentence `justification`; " +
      "the user is asked to approve that one call. Never ask for a wider mode up front or to be safe, and if " +
      "the user refuses, stop and explain instead of trying another way."
    )
  }
  return parts.join("\n\n")
}

/**
 * Parameter descriptions of `bash`.
 *
 * @since 0.1.0
 */
export const bashParameterDescriptions = {
  command: "The command line to run with `bash -c`.",
  description: "What the command does, in 5-10 words, shown to the user (e.g. \"List files in the src folder\").",
  timeoutMs: "Foreground time limit in milliseconds; the executor applies its default and caps it.",
  workdir: "Directory to run in; a relative path is taken from the session's working directory. " +
    "Defaults to the session's working directory.",
  run_in_background: "Start the command as a background task and return its id immediately.",
  sandbox_permissions: "The wider sandbox mode this one call needs, after the sandbox denied it. " +
    "Requires `justification`; the user approves it.",
  justification: "Required with `sandbox_permissions`: one sentence telling the user why this exact command " +
    "needs the wider access."
} as const

/**
 * The task tools' descriptions and parameter descriptions.
 *
 * @since 0.1.0
 */
export const taskToolDescriptions = {
  task_output: "Returns the output a background task produced since you last read it, then its status line " +
    "(`[status: running]`, `[status: completed, exit code: 0]`, …). By default it first waits until the task " +
    "finishes or `timeout_ms` passes; set `wait: false` to read at once.",
  task_list: "Lists the background tasks of this session, one per line: id, kind, status and label.",
  task_kill: "Stops a running background task. Read what it printed with `task_output` afterwards.",
  task_id: "The task id, as returned when the task started (e.g. `bash-1`).",
  wait: "Wait for the task to finish before reading (default true).",
  timeout_ms: "How long to wait, in milliseconds (default 30000, at most 600000). The task keeps running " +
    "when the wait ends.",
  reason: "Why the task is being stopped (optional)."
} as const

/**
 * The `tool:bash` prompt section (order 105).
 *
 * @since 0.1.0
 */
export const bashPromptSection: PromptSection = {
  name: "tool:bash",
  order: 105,
  text: "Every bash result tells you how the command ended. Look for the `[exit code: N]` marker on every " +
    "result, and when a command failed, timed out or was killed, find out why before you build on it."
}

/**
 * What the `tool:bash` prompt section adds for an agent that completion notices reach unprompted;
 * only a host that delivers them may add it.
 *
 * @since 0.1.0
 */
export const bashNoticePromise = "When a background task you started finishes, you are told without asking: a message " +
  "`background task <id> (...) finished [status: ...]` arrives, so keep working meanwhile instead of polling task_output."

/**
 * The `tool:bash` prompt text, with {@link bashNoticePromise} where completion notices are delivered.
 *
 * @since 0.1.0
 */
export const bashPromptText = (options: { readonly notices: boolean }): string =>
  options.notices ? `${bashPromptSection.text} ${bashNoticePromise}` : bashPromptSection.text
