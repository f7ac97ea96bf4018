/**
 * What bash reads from its environment as it starts, the one list every shell we start is guarded
 * against: the executor drops these from the inherited environment, and the container wrapper hides
 * them from its own shell.
 *
 * @internal
 */

/**
 * The variables: a file to source (`BASH_ENV`; `ENV` in posix mode), options (`SHELLOPTS`,
 * `BASHOPTS`, `POSIXLY_CORRECT`: `SHELLOPTS=xtrace:errexit` would change every command), a glob
 * filter (`GLOBIGNORE`) and a default timeout for `read` (`TMOUT`).
 */
export const bashStartupVariables: ReadonlySet<string> = new Set([
  "BASH_ENV",
  "ENV",
  "SHELLOPTS",
  "BASHOPTS",
  "POSIXLY_CORRECT",
  "GLOBIGNORE",
  "TMOUT"
])

/**
 * Whether bash would take `name` in as shell state when it starts: one of
 * {@link bashStartupVariables}, or an exported function (`BASH_FUNC_ls%%` would replace `ls`;
 * Environment Modules exports `BASH_FUNC_module%%`).
 */
export const isBashStartupState = (name: string): boolean =>
  bashStartupVariables.has(name) || name.startsWith("BASH_FUNC_")
