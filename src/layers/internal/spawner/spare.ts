/**
 * The launcher's spare: a bash the launcher starts ahead of a request while it is idle, for the file,
 * cwd, env and stdio of the last command that ran, so that the fork and bash's start-up are off the
 * next call's path. Its script, the request it reads, and the envs it may serve.
 *
 * @internal
 */

/**
 * The script of a spare. Once waiting, it says so (a `.` on fd 5), then waits on fd 5 for the command's
 * binary (the launcher's PATH search, which bash's own would not always repeat) and argv,
 * single-quoted, with a `.` line after them. The launcher writes that once the host knows the pid,
 * so, as with the gate, no command runs before, and one whose request was cut off (the launcher died)
 * never runs. Its own stderr is /dev/null until then (bash's start-up warnings come once, from the
 * command's bash); fd 4 is the real one. Then it `exec`s the binary with the argv: the command is the
 * same `bash -c` as a launch without a spare, with the same pid, group and descriptors (fd 3 is kept
 * for a script, as the gate keeps it). A bash older than 4.3 (no negative subscripts) exits with 125
 * at once.
 *
 * @internal
 */
export const spareScript = (script: boolean) =>
  "((BASH_VERSINFO[0] * 100 + BASH_VERSINFO[1] >= 403)) || exit 125; IFS=; printf . >&5; " +
  "mapfile -u 5 __effect_bash_l; exec 5<&-; [[ ${__effect_bash_l[-1]} == . ]] || exit 125; " +
  "unset '__effect_bash_l[-1]'; eval \"__effect_bash_a=(${__effect_bash_l[*]})\"; " +
  `exec 2>&4 4>&-${script ? "" : " 3<&-"}; ` +
  "exec -a \"${__effect_bash_a[1]}\" -- \"${__effect_bash_a[0]}\" \"${__effect_bash_a[@]:2}\""

/** A request as a spare reads it: the binary and each word of the argv single-quoted, then the `.` line. */
export const spareRequest = (binary: string, argv: ReadonlyArray<string>): string =>
  [binary, ...argv].map((word) => `'${word.replaceAll("'", "'\\''")}'`).join(" ") + "\n."

/**
 * Whether a spare may serve `env`, so that its command sees what a fresh bash's would: the spare's
 * own bash takes in bash's dynamic variables from the env (`BASH_ARGV0` becomes its `$0`, `RANDOM`
 * its seed, …) and passes them on changed or not at all, and it resets a shell level below 0, or
 * from 1000 on (with a warning). An `OLDPWD` that names no directory is checked by the launcher.
 *
 * @internal
 */
export const spareServes = (env: Readonly<Record<string, string>>): boolean => {
  const level = Number(env.SHLVL ?? 0)
  if (level < 0 || level >= 999) return false
  for (const name in env) {
    switch (name) {
      case "BASH_ARGV0":
      case "BASH_COMMAND":
      case "BASH_SUBSHELL":
      case "BASHPID":
      case "COMP_WORDBREAKS":
      case "EPOCHREALTIME":
      case "EPOCHSECONDS":
      case "HISTCMD":
      case "LINENO":
      case "RANDOM":
      case "SRANDOM":
        return false
    }
  }
  return true
}

/**
 * Whether launchers started from now on keep a spare: off only to measure what the spare saves.
 *
 * @internal
 */
export const spareSwitch = { enabled: true }

// How long the launcher must have been idle (no command running, no request) before it starts a
// spare: a spare starting while calls follow each other closely competes with them for the CPU
// and for the launcher itself, and would cost them more than it saves.
export const spareIdleMs = 10
// How long a spare waits before it ends unused: it holds its directory (an unmount there fails).
export const spareLifetimeMs = 60_000
// bash reads a pipe one byte per read: a longer request costs the spare more than it saves, and
// takes the way without one.
export const spareRequestMaxBytes = 1024
