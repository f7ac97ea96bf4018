/**
 * The texts of confined terminals, in one place (each is tested verbatim): a runner that did not
 * start the shell, and an executor whose confinement terminals cannot share (a custom one).
 *
 * @internal
 */

/** The runner (bubblewrap) ended before its command, the shell, started; `line` is the first it printed. */
export const runnerExitedText = (line: string | undefined): string =>
  `the runner exited before the shell started${line === undefined ? "" : `: ${line}`}`

/** The runner did not start the shell within `ms`. */
export const runnerSlowText = (ms: number): string => `the runner did not start the shell within ${ms}ms`

/** Terminals composed with a confining executor that cannot place a shell the way it runs a call. */
export const unconfinableText =
  "bash-terminals: the executor confines its commands but cannot start terminals under the same rules; configure terminals without it"

