/**
 * The shell every call in a box runs under (`wrapper.sh`, its protocol in `served.ts`): it runs the
 * command as the leader of a process group of its own, says the leader's pid before the command
 * runs, and says how the leader ended on the exec's stdout, after the call's token.
 *
 * The status line is `exit <code> <members>` or `signal <name> <members>`, where `<members>` is
 * `alive` when another member of the group is still running (zombies count as dead) and `empty`
 * otherwise, followed by ` oom` when the container's cgroup counted an OOM kill while the command ran
 * (every process of the command is a likelier OOM victim than the wrapper, so a memory limit does not
 * cost the status), then two tags of that text under the call's key ({@link statusTag}). When members
 * were left, the wrapper stays and watches them: once none is left it says `empty <k5> <k6>`. So the
 * host knows the group's state without asking the engine.
 *
 * The key and the token are what make a line the wrapper's: the command runs as the same user and
 * can write into its own output, or another call's (`/proc/PID/fd/1`), but cannot read them. They are
 * never in an environment, an argv or a file; the request is consumed before the command starts; and
 * the wrapper's shell is a copy of the image's bash that its user may execute but not read
 * ({@link supervisorShell}), so the kernel makes the wrapper non-dumpable: its memory, environment and
 * descriptors are closed to the command's processes. The tags keep a status a command forges under a
 * token it stole from its own stdout (a pipe it may open for reading) from counting.
 *
 * A job's status in the table (`jobs -l`) is what tells a death by signal from an exit with the same
 * number (`kill -9 $$` against `exit 137`); a CHLD trap records it before `wait` removes the job.
 *
 * @internal
 */
import { readFileSync } from "node:fs"
import { bashStartupVariables } from "../bashStartup.js"

/** A file system of the box's own that only {@link supervisorUid} writes. */
export const supervisorDir = "/.effect-bash-supervisor"

/** The wrapper's shell: the image's bash, copied there with mode 0111 when the box starts. */
export const supervisorShell = `${supervisorDir}/bash`

/**
 * The owner of the supervisor's copy of bash: not the box's user, so that user can neither change
 * the copy nor make it readable (no capability lets it act for another user). A uid no image's user
 * has, so a user named rather than numbered is not it either.
 */
export const supervisorUid = (boxUid: number | undefined): number => boxUid === 2147483646 ? 2147483645 : 2147483646

/**
 * Makes {@link supervisorShell} (lost when the box restarts: its file system is a tmpfs), run as
 * {@link supervisorUid}; prints `made`, or `ready` when it was there.
 */
export const supervisorSetupArgv: ReadonlyArray<string> = [
  "bash",
  "--norc",
  "--noprofile",
  "-c",
  `if [ -x "$1" ]; then printf ready; else cp -- "$(type -P bash)" "$1" && chmod 0111 "$1" && printf made; fi`,
  "effect-bash",
  supervisorShell
]

/** The modulus of the status tags: a prime below 2^31, so the wrapper's arithmetic fits in 63 bits. */
export const tagModulus = 2147483647n

/**
 * The tag of `text` under the pair `(a, b)`: a one-time polynomial MAC (`b + Σ text[i]·a^(n-i)` mod
 * {@link tagModulus}); without the pair, a tag for another text is a guess of one in 2^31 / length.
 */
export const statusTag = (text: string, a: bigint, b: bigint): bigint => {
  let h = 0n
  for (const code of Buffer.from(text, "latin1")) h = (h + BigInt(code)) * a % tagModulus
  return (h + b) % tagModulus
}

let script: string | undefined
/** The wrapper's text: `wrapper.sh` beside this module, read when a container first needs it; the bundles hold it inline. */
const wrapperScript = (): string => script ??= readFileSync(new URL("./wrapper.sh", import.meta.url), "utf8")

/**
 * The wrapper's argv: `serve` reads one call after another from stdin, `once` reads one call and
 * leaves the rest of stdin to its command (`served.ts`).
 */
export const servedArgv = (mode: "serve" | "once"): ReadonlyArray<string> =>
  [supervisorShell, "--norc", "--noprofile", "-c", wrapperScript(), "effect-bash", mode]

/**
 * What bash reads from its environment as it starts (a file to source, options, a glob filter):
 * hidden from the wrapper's own shell, which they would change, and given back to the command's
 * (`unhide` in the script).
 */
const startupVariables = bashStartupVariables

/** The prefix of the wrapper's own names in the exec's environment. */
const ownPrefix = "__effect_bash_"

/**
 * Why a command with `env` cannot run in a container, or `undefined`: exported functions would be
 * the wrapper's too (one named `exec` or `wait` would replace what it runs), and names with the
 * wrapper's prefix are its own.
 */
export const envProblem = (env: Readonly<Record<string, string>>): string | undefined => {
  for (const name in env) {
    if (name === "" || name.includes("=")) return `env: ${JSON.stringify(name)}: not a variable name`
    if (name.startsWith("BASH_FUNC_")) return `env: ${name}: exported functions do not reach a command in a container`
    if (name.startsWith(ownPrefix)) return `env: ${name}: names starting with ${ownPrefix} are the container executor's own`
  }
  return undefined
}

/** The exec's environment for a command whose environment is `env` (one {@link envProblem} passed). */
export const wrapperEnv = (env: Readonly<Record<string, string>>): Record<string, string> => {
  const result: Record<string, string> = {}
  for (const [name, value] of Object.entries(env)) result[startupVariables.has(name) ? `${ownPrefix}saved_${name}` : name] = value
  return result
}

/** How the leader ended, as the wrapper's status line says. */
export interface LeaderStatus {
  readonly exitCode: number | null
  readonly signal: string | null
  /** Another member of the group is running (as the wrapper, which watches them, last said). */
  readonly groupAlive: boolean
  /** The container's cgroup counted an OOM kill while the command ran. */
  readonly oomKilled: boolean
}

/** The part of a call's key a status is tagged under, and the line the wrapper says once the group is empty. */
export interface StatusKey {
  readonly first: readonly [bigint, bigint]
  readonly second: readonly [bigint, bigint]
  /** The line the wrapper adds once the group is empty. */
  readonly emptyLine: string
}

/** A key from six random numbers below {@link tagModulus}. */
export const makeStatusKey = (numbers: ReadonlyArray<bigint>): StatusKey => {
  const [a, b, c, d, e, f] = numbers.map((n) => n % tagModulus) as [bigint, bigint, bigint, bigint, bigint, bigint]
  return { first: [a, b], second: [c, d], emptyLine: `empty ${e} ${f}` }
}

/** The status in the wrapper's `line`, or `undefined` when its tags are not the key's (a line the command wrote). */
export const parseStatus = (line: string, key: StatusKey): LeaderStatus | undefined => {
  const fields = line.split(" ")
  if (fields.length < 4) return undefined
  const [first, second] = fields.splice(-2, 2)
  const text = fields.join(" ")
  if (first !== String(statusTag(text, ...key.first)) || second !== String(statusTag(text, ...key.second))) return undefined
  const [how, value, group, oom] = fields
  const alive = group === "alive"
  if (how === "exit" && value !== undefined && /^\d+$/.test(value)) {
    return { exitCode: Number(value), signal: null, groupAlive: alive, oomKilled: oom === "oom" }
  }
  if (how === "signal" && value !== undefined) {
    return { exitCode: null, signal: value, groupAlive: alive, oomKilled: oom === "oom" }
  }
  return undefined
}

/** Signals a group from inside the container and prints `sent`; a group that is gone is not an error. */
export const signalArgv = (pgid: number, signal: "SIGTERM" | "SIGKILL"): ReadonlyArray<string> =>
  ["bash", "--norc", "--noprofile", "-c", `kill -s ${signal.slice(3)} -- -${pgid} 2>/dev/null; printf sent`]

/** Prints `alive` when a member of the group is running (zombies count as dead), else `empty`. */
export const groupAliveArgv = (pgid: number): ReadonlyArray<string> =>
  ["bash", "--norc", "--noprofile", "-c", `pg=${pgid}\n${membersFunction()}\nmembers\nprintf '%s' "$group"`]

/** The wrapper's `members` function, on its own. */
const membersFunction = (): string => {
  const text = wrapperScript()
  return text.slice(text.indexOf("members() {"), text.indexOf("# The command's processes are"))
}
