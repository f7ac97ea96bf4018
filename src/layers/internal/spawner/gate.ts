/**
 * The one owner of "no command runs before the host has its pid", for the commands the launcher
 * starts (a command the host spawns itself has its pid from the spawn).
 *
 * A launched bash sources, before its command, its `BASH_ENV`: `/dev/fd/5`, the launcher's gate
 * file, which has no name (made with `O_TMPFILE`, held read-only by the launcher): no command can
 * find it by a path, write or remove it, and a sandboxed one, in its own pid namespace, cannot
 * reach the launcher's descriptors either. Its text ({@link gateScript}) waits for the admission
 * line on fd 1: the command's stdout is one end of a socket pair, and the launcher writes the line
 * into the other end, the one it hands to the host, only after its pid line to the host (see
 * `launcherMain.ts`); the host never writes there. End-of-file instead (the launcher died first) and
 * the command never runs: bash exits with 125.
 *
 * bash reads no `BASH_ENV` in posix mode, and a caller's env could change what the gate does (see
 * {@link gateServes}): such an env, or a runner spawned instead of bash, is spawned by the host.
 *
 * @internal
 */
import { isBashStartupState } from "../bashStartup.js"

/** The `BASH_ENV` of a launched bash: the gate file, at fd 5. */
export const gateBashEnv = "/dev/fd/5"

/** What the launcher writes to a command's stdout socket, for the gate to read, once the host has its pid. */
export const admission = "\n"

/**
 * The gate file's text. After the admission, fds 3 to 5 become what a direct spawn has there
 * (`/dev/null` where the host inherited a descriptor, else closed; fd 3 stays for a script), and
 * `BASH_ENV` goes, so no shell the command starts reads it.
 */
export const gateScript = (inherited: ReadonlyArray<number>): string => {
  const restore = (fd: number) => inherited.includes(fd) ? `${fd}</dev/null` : `${fd}<&-`
  return "IFS= read -r -u 1 __effect_bash_gate || exit 125; " + `exec ${restore(4)} ${restore(5)}; ` +
    (inherited.includes(3) ? "" : "[[ /proc/self/fd/3 -ef /dev/null ]] && exec 3<&-; ") +
    "unset BASH_ENV __effect_bash_gate\n"
}

/**
 * Whether `env` keeps the gate working: bash in posix mode reads no `BASH_ENV`, and a caller's own
 * bash start-up state (`BASH_ENV`, shell options, exported functions, `TMOUT`: a timeout for the
 * gate's `read`, …) or variables with our names could change what it does.
 */
export const gateServes = (env: Readonly<Record<string, string>>): boolean => {
  for (const name in env) {
    if (isBashStartupState(name) || name.startsWith("__effect_bash_")) return false
  }
  return true
}
