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
import { within } from "./canonicalDir.js"
import { bridgeArgv } from "../network/bridge.js"
import { unixSocketFilter } from "./seccomp.js"

/**
 * How bubblewrap reports a denied write (EROFS) and its own failures. Binding `/`, it remounts each
 * mount below it with the flags it read from the mount table; one unmounted meanwhile on the host
 * (under a shared mount such as Docker's `/var/lib/docker`, whose unmounts reach the runner's
 * namespace) fails that remount, though `/` itself always exists.
 */
export const bwrapDialect: RunnerDialect = {
  denial: "read-only file system",
  failurePrefix: "bwrap: ",
  mountRacePrefix: "bwrap: Can't bind mount /oldroot/ on /newroot/: "
}

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

const wrapper = (
  argv: ReadonlyArray<string>,
  input?: ProcessSpawner.Wrapper["input"],
  inside: ReadonlyArray<string> = []
): ProcessSpawner.Wrapper => ({
  argv: [...argv, "--", ...inside],
  pidNamespace: true,
  ...(input === undefined ? {} : { input })
})

/** Where bubblewrap reads the seccomp filter from; it closes the descriptor before the command runs. */
const seccompFd = 4

/**
 * Containment without file confinement: the whole filesystem as it is, in a PID namespace.
 */
export const containWrapper = (bwrapPath: string): ProcessSpawner.Wrapper =>
  wrapper([bwrapPath, "--bind", "/", "/", ...namespace])

/**
 * An existing path of the hidden list, symlinks resolved.
 */
export interface HiddenPath {
  readonly path: string
  readonly isDirectory: boolean
}

/**
 * The existing paths of `hidden` (`~/` is `home`); paths that do not exist are skipped. Resolved at
 * each call, so a store created since the last call is hidden too.
 */
export const hiddenPaths = (hidden: ReadonlyArray<string>, home: string): ReadonlyArray<HiddenPath> =>
  hidden.flatMap((entry) => {
    const given = entry === "~" || entry.startsWith("~/") ? NodePath.join(home, entry.slice(1)) : entry
    try {
      const path = NodeFs.realpathSync(given)
      return [{ path, isDirectory: NodeFs.statSync(path).isDirectory() }]
    } catch {
      return []
    }
  })

/**
 * The mounts that hide each path: an empty read-only tmpfs over a directory, `/dev/null` over
 * anything else.
 */
const maskArgs = (hidden: ReadonlyArray<HiddenPath>): ReadonlyArray<string> =>
  hidden.flatMap(({ isDirectory, path }) =>
    isDirectory ? ["--tmpfs", path, "--remount-ro", path] : ["--ro-bind", "/dev/null", path]
  )

/**
 * Each directory strictly inside the writable `root` that leads to a hidden path, parents first. Each
 * is bound onto itself: a mount point cannot be renamed or removed (EBUSY), so a command cannot move
 * a store aside (`mv ~/.docker ~/.dockerx`) for a later call, whose masks go by name, to read it.
 * The hidden paths themselves are mount points already (their masks); the root too.
 */
const pinnedDirs = (hidden: ReadonlyArray<HiddenPath>, root: string): ReadonlyArray<string> => {
  const pinned = new Set<string>()
  for (const { path } of hidden) {
    for (let dir = NodePath.dirname(path); dir !== root && within(dir, root); dir = NodePath.dirname(dir)) {
      pinned.add(dir)
    }
  }
  return [...pinned].sort((a, b) => a.split("/").length - b.split("/").length)
}

/** The descriptors the pinned directories are opened on: a POSIX shell's redirections reach 9. */
const firstPinFd = 5
const maxPins = 5

let script: string | undefined
/**
 * `pinDirs.sh` beside this module, read when a sandbox first pins (the bundles hold it inline).
 * Opens each pinned directory (its arguments: the first descriptor, the most it may pin, the count,
 * then the paths) on its descriptor and refuses one whose path led anywhere else, then runs bubblewrap (the remaining arguments), which
 * binds each descriptor (`--bind-fd`) and checks the mount is that directory. A command running in
 * the same root meanwhile can replace a pinned directory with a link; bound by path, the link's
 * target would be writable. Each is entered (`cd -P`) and `.` opened, never the path itself: a named
 * pipe left there would block the open until a writer came (`command exec` fails without ending the
 * shell, so every failure is reported). What was opened is checked through its descriptor's
 * `/proc/self/fd` link, which names the directory itself: bash (`/bin/sh` on some systems) answers
 * `pwd -P` from the path it was given, which a swap back makes look right. The working directory
 * (by its physical path), `PWD` and `OLDPWD` are then restored for bubblewrap, which starts the
 * command where it was started. It runs on the host before bubblewrap, so it names nothing through
 * `PATH` (which a confined command may write into): `/bin/sh` and builtins only.
 */
const openPinnedDirs = (): string => script ??= NodeFs.readFileSync(new URL("./pinDirs.sh", import.meta.url), "utf8")

/**
 * The argv that opens `pinned` on their descriptors (see {@link openPinnedDirs}) and then runs the
 * argv that follows it; empty when nothing is pinned.
 */
export const pinOpener = (pinned: ReadonlyArray<string>): ReadonlyArray<string> =>
  pinned.length === 0
    ? []
    : ["/bin/sh", "-c", openPinnedDirs(), "effect-bash-pins", String(firstPinFd), String(maxPins), String(pinned.length), ...pinned]

/**
 * A network whose only way out is the call's proxies, reached through their unix sockets in
 * `socketDir` (bound into the sandbox) by the bridge's relays.
 */
export interface ProxiedNetwork {
  readonly socketDir: string
  readonly httpSocket: string
  readonly socksSocket: string
  readonly socatPath: string
  readonly perlPath: string
}

/**
 * Settings of a confined profile.
 */
export interface ConfinedProfile {
  readonly bwrapPath: string
  readonly mode: Exclude<BashExecutor.SandboxMode, "danger-full-access">
  /** The writable root under `workspace-write`. */
  readonly workspaceRoot: string
  readonly network: "host" | "none" | ProxiedNetwork
  /** Under `network: "none"` or proxied, whether `socket(AF_UNIX, …)` still works (no seccomp filter). */
  readonly allowUnixSockets: boolean
  /** From {@link hiddenPaths}; their masks come last so they cover the workspace root too. */
  readonly hidden: ReadonlyArray<HiddenPath>
}

/**
 * The reference's profile (`--ro-bind / /`, plus a private `/tmp` and the writable root under
 * `workspace-write`), in a PID namespace, optionally without network (then without unix sockets too,
 * unless allowed), with credential stores masked
 * and, under `workspace-write`, the directories leading to them pinned in place.
 */
export const confinedWrapper = (profile: ConfinedProfile): ProcessSpawner.Wrapper => {
  const proxied = typeof profile.network === "object" ? profile.network : undefined
  const filtered = profile.network !== "host" && !profile.allowUnixSockets
  const pinned = profile.mode === "workspace-write" ? pinnedDirs(profile.hidden, profile.workspaceRoot) : []
  return wrapper([
    ...pinOpener(pinned),
    profile.bwrapPath,
    "--ro-bind",
    "/",
    "/",
    ...(profile.mode === "workspace-write"
      ? [
        "--tmpfs",
        "/tmp",
        "--bind",
        profile.workspaceRoot,
        profile.workspaceRoot,
        ...pinned.flatMap((dir, index) => ["--bind-fd", String(firstPinFd + index), dir])
      ]
      : []),
    // After the private /tmp, which would otherwise hide a directory under it.
    ...(proxied === undefined ? [] : ["--ro-bind", proxied.socketDir, proxied.socketDir]),
    // After the root: a root of `/` would otherwise bind the host's /proc and /dev back over them.
    ...namespace,
    ...(profile.network === "host" ? [] : ["--unshare-net"]),
    // A proxied network's bridge installs the filter itself, after its relays started.
    ...(filtered && proxied === undefined ? ["--seccomp", String(seccompFd)] : []),
    ...maskArgs(profile.hidden)
  ], filtered ? { fd: seccompFd, bytes: unixSocketFilter } : undefined, proxied === undefined ? [] : bridgeArgv({
    socatPath: proxied.socatPath,
    httpSocket: proxied.httpSocket,
    socksSocket: proxied.socksSocket,
    ...(filtered ? { filter: { perlPath: proxied.perlPath, fd: seccompFd, arch: process.arch } } : {})
  }))
}
