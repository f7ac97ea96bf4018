/**
 * The seccomp profile every box runs under, in the Docker Engine's JSON form (`SecurityOpt:
 * ["seccomp=<json>"]`). It replaces the engine's default profile, so it keeps that profile's refusals
 * that no dropped capability already makes (new namespaces, the kernel keyring, BPF, perf,
 * userfaultfd), and adds the executor's own:
 *
 * - **Set-id bits** (unless the box runs as root on request): no `chmod`, `open(O_CREAT)`, `mknod` …
 *   with `S_ISUID` or `S_ISGID`, so a command cannot leave a file in the workspace that the host would
 *   run with its owner's identity (a root-owned workspace makes that owner root).
 * - **Unix sockets** (under `network: "none"`): no `socket(AF_UNIX, …)`, so a command cannot reach a
 *   host service listening on a path in the workspace; `socketpair` stays, its ends reach nothing
 *   outside. Abstract sockets, TCP and UDP are the network namespace's to cut.
 * - **io_uring**, which opens files and sockets without the system calls above.
 *
 * seccomp sees numbers, never paths. Other ABIs (i386, x32) are not in the profile, so their calls
 * are refused whole (`socketcall` could not be filtered).
 *
 * @internal
 */

type Rule = {
  readonly names: ReadonlyArray<string>
  readonly action: "SCMP_ACT_ERRNO"
  readonly errnoRet?: number
  readonly args?: ReadonlyArray<{ readonly index: number; readonly value: number; readonly valueTwo: number; readonly op: string }>
}

const EPERM = 1
const ENOSYS = 38

const deny = (names: ReadonlyArray<string>, errnoRet = EPERM): Rule => ({ names, action: "SCMP_ACT_ERRNO", errnoRet })

/** Refuses `name` when every `[index, mask]` of `bits` has its mask's bits set in the argument. */
const denyWhenSet = (name: string, bits: ReadonlyArray<readonly [number, number]>): Rule => ({
  names: [name],
  action: "SCMP_ACT_ERRNO",
  errnoRet: EPERM,
  args: bits.map(([index, mask]) => ({ index, value: mask, valueTwo: mask, op: "SCMP_CMP_MASKED_EQ" }))
})

const S_ISUID = 0o4000
const S_ISGID = 0o2000
const O_CREAT = 0o100
/** `O_TMPFILE` without `O_DIRECTORY`: such a file can be linked in with its mode. */
const O_TMPFILE_BIT = 0o20000000

/** The namespace flags of `clone` and `unshare` (user, mount, UTS, IPC, PID, network, cgroup). */
const namespaceFlags = [0x10000000, 0x00020000, 0x04000000, 0x08000000, 0x20000000, 0x40000000, 0x02000000]
/** `CLONE_NEWTIME`: `unshare` only (in `clone`'s flags that bit belongs to the exit signal). */
const CLONE_NEWTIME = 0x80

/** The calls that set a mode, and the index of their mode argument. */
const modeCalls: ReadonlyArray<readonly [string, number]> = [
  ["chmod", 1],
  ["fchmod", 1],
  ["fchmodat", 2],
  ["fchmodat2", 2],
  ["creat", 1],
  ["mknod", 1],
  ["mknodat", 2]
]
/** The calls that create a file with a mode when their flags say so: flags index, mode index. */
const openCalls: ReadonlyArray<readonly [string, number, number]> = [
  ["open", 1, 2],
  ["openat", 2, 3]
]

const setIdRules = (): ReadonlyArray<Rule> =>
  [S_ISUID, S_ISGID].flatMap((bit) => [
    ...modeCalls.map(([name, mode]) => denyWhenSet(name, [[mode, bit]])),
    ...openCalls.flatMap(([name, flags, mode]) =>
      [O_CREAT, O_TMPFILE_BIT].map((create) => denyWhenSet(name, [[flags, create], [mode, bit]]))
    )
  ])

/** What a box may not do beyond its capabilities. */
export interface ProfileOptions {
  /** Refuse `socket(AF_UNIX, …)` (the box has no network). */
  readonly blockUnixSockets: boolean
  /** Refuse set-id mode bits (the box does not run as root on request). */
  readonly blockSetId: boolean
}

/** The profile as the engine takes it after `seccomp=`. */
export const seccompProfile = (options: ProfileOptions): string =>
  JSON.stringify({
    defaultAction: "SCMP_ACT_ALLOW",
    archMap: [
      { architecture: "SCMP_ARCH_X86_64", subArchitectures: [] },
      { architecture: "SCMP_ARCH_AARCH64", subArchitectures: [] }
    ],
    syscalls: [
      deny(["keyctl", "add_key", "request_key", "bpf", "perf_event_open", "userfaultfd", "setns"]),
      deny(["io_uring_setup", "io_uring_enter", "io_uring_register"]),
      // Their arguments sit in memory a filter cannot read: ENOSYS makes libc fall back to the calls above.
      deny(["clone3", "openat2"], ENOSYS),
      ...namespaceFlags.flatMap((flag) => [denyWhenSet("clone", [[0, flag]]), denyWhenSet("unshare", [[0, flag]])]),
      denyWhenSet("unshare", [[0, CLONE_NEWTIME]]),
      ...(options.blockSetId ? setIdRules() : []),
      ...(options.blockUnixSockets
        ? [{ names: ["socket"], action: "SCMP_ACT_ERRNO", errnoRet: EPERM, args: [{ index: 0, value: 1, valueTwo: 0, op: "SCMP_CMP_EQ" }] }]
        : [])
    ]
  })
