/**
 * How a terminal's shell is started: an interactive bash without profile or rc files, with the
 * executor's scrubbed environment and managed `DSH_*` variables, and a prompt this layer controls —
 * `PROMPT_COMMAND` prints a private OSC `133;D;<status>` marker before every prompt and sets `PS1`
 * back to {@link controlledPrompt}, so a prompt the model changes cannot hide readiness.
 *
 * @internal
 */

/** The printable prompt that must follow the private marker exactly. */
export const controlledPrompt = "dsh> "

/** The shell's argv. */
export const shellFile = "/bin/bash"
export const shellArgs: ReadonlyArray<string> = ["--noprofile", "--norc", "-i"]

/**
 * What a terminal adds over the executor's environment; it wins over the caller's variables, since
 * readiness depends on it.
 */
export const terminalVariables = (term: string, terminalId: string): Readonly<Record<string, string>> => ({
  TERM: term,
  PS1: controlledPrompt,
  PROMPT_COMMAND: `printf "\\033]133;D;%s\\007" "$?"; PS1='${controlledPrompt}'`,
  // No history file: a terminal's commands are not the user's history.
  HISTFILE: "",
  BASH_SILENCE_DEPRECATION_WARNING: "1",
  DSH_PTY_SESSION_ID: terminalId
})
