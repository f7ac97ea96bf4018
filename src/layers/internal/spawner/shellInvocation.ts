/**
 * How a command becomes bash's argv: `bash --norc --noprofile -c -- <command>`, or, for a command
 * too long for one argument, a builtin-only prelude that reads it from fd 3.
 *
 * @internal
 */

/**
 * Whether `command` is too long for one argument of bash's argv: commands up to 64 KiB go as the `-c`
 * argument; longer ones would hit the kernel's per-argument limit (`MAX_ARG_STRLEN`, 128 KiB:
 * `spawn E2BIG`) and are passed another way (here over fd 3; in a container over stdin).
 */
export const tooLongForArgv = (command: string): boolean => Buffer.byteLength(command) > 64 * 1024

/**
 * Reads the whole script from fd 3 with builtins only (`PATH` is the caller's), closes fd 3 so the
 * command's children never inherit it, and runs the script in the same shell, so `$0`, `exit` and
 * traps behave as under `-c` (a syntax error is reported as `eval` rather than `-c`).
 */
const readScriptFromFd3 = "IFS= read -r -d '' -u 3 __effect_bash_script; exec 3<&-; " +
  "eval \"unset __effect_bash_script; $__effect_bash_script\""

/** bash's arguments for a command, and the script to write to its fd 3 when it is too long for argv. */
export interface ShellInvocation {
  readonly args: ReadonlyArray<string>
  readonly script?: string
}

/**
 * bash's argv for `command`. `--` ends bash's options, so a command starting with `-` (`--version`,
 * `-O extglob`) is a command; `--norc`: bash sources ~/.bashrc when stdin is a socket, as Node's stdin
 * pipe is.
 */
export const shellInvocation = (command: string): ShellInvocation =>
  tooLongForArgv(command)
    ? { args: ["--norc", "--noprofile", "-c", "--", readScriptFromFd3], script: command }
    : { args: ["--norc", "--noprofile", "-c", "--", command] }
