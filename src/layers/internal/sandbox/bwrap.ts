/**
 * The bubblewrap argv of each profile, and bubblewrap's dialect. Every profile runs the command in
 * its own PID namespace with a fresh `/proc`, dying with its runner, and without any capability.
 *
 * @internal
 */
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import type { BashExecutor } from "../../../services/BashExecutor.js"
import type { ProcessSpawner } from "../../../services/ProcessSpawner.js"
import type { RunnerDialect } from "../executor/RunnerWatch.js"

/**
 * How bubblewrap reports a denied write (EROFS) and its own failures.
 */
export const bwrapDialect: RunnerDialect = { denial: "read-only file system", failurePrefix: "bwrap: " }

/**
 * Credential stores hidden from every confined command (`~/` is the configured home).
 */
export const defaultHidden: ReadonlyArray<string> = [
  "~/.ssh",
  "~/.aws",
  "~/.gnupg",
  "~/.config/gh",
  "~/.docker/config.json",
  "~/.kube",
  "~/.netrc",
  "~/.npmrc",
  "~/.pypirc",
  "~/.git-credentials"
]

// Its own PID namespace and /proc; a fresh minimal /dev; gone with its runner. No capability, even
// when the host runs as root: with one, a command could remount the read-only root writable or
// unmount a mask. bubblewrap sets no_new_privs, so no exec (a setuid one included) regains any.
const namespace = ["--dev", "/dev", "--proc", "/proc", "--unshare-pid", "--die-with-parent", "--cap-drop", "ALL"]

const wrapper = (argv: ReadonlyArray<string>): ProcessSpawner.Wrapper => ({ argv: [...argv, "--"], pidNamespace: true })

/**
 * Containment without file confinement: the whole filesystem as it is, in a PID namespace.
 */
export const containWrapper = (bwrapPath: string): ProcessSpawner.Wrapper =>
  wrapper([bwrapPath, "--bind", "/", "/", ...namespace])

/**
 * The mounts that hide each existing path of `hidden`: an empty read-only tmpfs over a directory,
 * `/dev/null` over anything else. Paths that do not exist are skipped.
 */
export const maskArgs = (hidden: ReadonlyArray<string>, home: string): ReadonlyArray<string> =>
  hidden.flatMap((entry) => {
    const given = entry === "~" || entry.startsWith("~/") ? NodePath.join(home, entry.slice(1)) : entry
    let target: string
    let isDirectory: boolean
    try {
      target = NodeFs.realpathSync(given)
      isDirectory = NodeFs.statSync(target).isDirectory()
    } catch {
      return []
    }
    return isDirectory ? ["--tmpfs", target, "--remount-ro", target] : ["--ro-bind", "/dev/null", target]
  })

/**
 * Settings of a confined profile.
 */
export interface ConfinedProfile {
  readonly bwrapPath: string
  readonly mode: Exclude<BashExecutor.SandboxMode, "danger-full-access">
  /** The writable root under `workspace-write`. */
  readonly workspaceRoot: string
  readonly network: "host" | "none"
  /** From {@link maskArgs}; they come last so they cover the workspace root too. */
  readonly masks: ReadonlyArray<string>
}

/**
 * The reference's profile (`--ro-bind / /`, plus a private `/tmp` and the writable root under
 * `workspace-write`), in a PID namespace, optionally without network, with credential stores masked.
 */
export const confinedWrapper = (profile: ConfinedProfile): ProcessSpawner.Wrapper =>
  wrapper([
    profile.bwrapPath,
    "--ro-bind",
    "/",
    "/",
    ...(profile.mode === "workspace-write"
      ? ["--tmpfs", "/tmp", "--bind", profile.workspaceRoot, profile.workspaceRoot]
      : []),
    // After the root: a root of `/` would otherwise bind the host's /proc and /dev back over them.
    ...namespace,
    ...(profile.network === "none" ? ["--unshare-net"] : []),
    ...profile.masks
  ])
