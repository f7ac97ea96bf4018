/**
 * How output is shown as one text: the executor's background reads, rendered results
 * and UI cards all merge a run's two streams this way.
 *
 * @internal
 */

/**
 * `stdout`, then — when `stderr` is non-empty — a newline if `stdout` is non-empty and unterminated,
 * `[stderr]\n` and `stderr`.
 */
export const mergeStreams = (stdout: string, stderr: string): string => {
  if (stderr === "") return stdout
  const separator = stdout !== "" && !stdout.endsWith("\n") ? "\n" : ""
  return `${stdout}${separator}[stderr]\n${stderr}`
}
