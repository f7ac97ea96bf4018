/**
 * Spawning without a fork: libc's `posix_spawn`, called through koffi. A fork copies the page tables
 * of the process that forks, so `child_process.spawn` costs the host more the more memory it keeps;
 * `posix_spawn` (a vfork: the child borrows the host's memory until its exec) costs the same from a
 * host of any size. Each child leads a new session, has every signal at its default and none
 * blocked, and gets the stdio a Node spawn would give it (socket pairs for pipes, `/dev/null` for
 * the ignored standard descriptors, the masked inherited ones). Its exit is learnt from `SIGCHLD`
 * (`waitpid` on each child still running), which only the main thread receives.
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import { EventEmitter } from "node:events"
import * as NodeFs from "node:fs"
import * as NodeNet from "node:net"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"
import type { Readable } from "node:stream"
import { isMainThread } from "node:worker_threads"

type Entry = "pipe" | "ignore" | number

/** A child spawned by {@link PosixSpawner.spawn}; emits one `exit`, with Node's code and signal. */
export class PosixChild extends EventEmitter {
  exitCode: number | null = null
  signalCode: NodeJS.Signals | null = null
  exited = false
  constructor(
    readonly pid: number,
    readonly stdio: ReadonlyArray<NodeNet.Socket | null>
  ) {
    super()
  }
  get stdout(): Readable {
    return this.stdio[1]!
  }
  get stderr(): Readable {
    return this.stdio[2]!
  }
  settle(exitCode: number | null, signalCode: NodeJS.Signals | null): void {
    this.exitCode = exitCode
    this.signalCode = signalCode
    this.exited = true
    this.emit("exit", exitCode, signalCode)
  }
}

/** What a spawn needs: the same values a `child_process.spawn` takes. */
export interface PosixSpawnRequest {
  readonly file: string
  readonly args: ReadonlyArray<string>
  readonly cwd: string
  readonly env: Readonly<Record<string, string>>
  readonly stdio: ReadonlyArray<Entry>
}

export interface PosixSpawner {
  /**
   * Spawns `request`. `undefined` when it is one this spawner leaves to `child_process` (a NUL byte
   * in a value, which Node refuses with its own message; a new socket's end numbered where a pipe
   * goes); throws as Node's spawn reports a failure (`spawn <file> ENOENT`, `spawn ENOTDIR`, with
   * `code`) when no process started.
   */
  readonly spawn: (request: PosixSpawnRequest) => PosixChild | undefined
}

const O_RDONLY = 0
const O_RDWR = 2
const O_CLOEXEC = 0o2000000
const AF_UNIX = 1
const SOCK_STREAM = 1
const WNOHANG = 1
const POSIX_SPAWN_SETSIGDEF = 0x04
const POSIX_SPAWN_SETSIGMASK = 0x08
const POSIX_SPAWN_SETSID = 0x80
// Larger than glibc's and musl's `posix_spawn_file_actions_t`, `posix_spawnattr_t` and `sigset_t`.
const opaqueBytes = 1024

/** Names by number; of two names for one number, the first (`SIGABRT`, not `SIGIOT`), as Node reports. */
const namesOf = <N extends string>(constants: Readonly<Record<string, number>>): ReadonlyMap<number, N> => {
  const names = new Map<number, N>()
  for (const [name, value] of Object.entries(constants)) if (!names.has(value)) names.set(value, name as N)
  return names
}
const errnoNames = namesOf<string>(NodeOs.constants.errno)
const signalNames = namesOf<NodeJS.Signals>(NodeOs.constants.signals)

/** The codes Node reports in an `error` event naming the file; it throws any other naming none. */
const namingTheFile: ReadonlySet<string> = new Set(["EACCES", "EAGAIN", "EMFILE", "ENFILE", "ENOENT"])

/** Node's spawn error: `spawn bash ENOENT`, `spawn bash EMFILE`, but `spawn ENOTDIR`, `spawn E2BIG`. */
const spawnError = (file: string, errno: number): Error => {
  const code = errnoNames.get(errno)
  const syscall = code !== undefined && namingTheFile.has(code) ? `spawn ${file}` : "spawn"
  return Object.assign(new Error(`${syscall} ${code ?? errno}`), { code, errno: -errno, syscall })
}

const hasNul = (value: string) => value.includes("\0")

const { EACCES, ENOENT, ENOTDIR } = NodeOs.constants.errno

/** The errno of a failed `fs` call, as a positive number (Node's are negative), else `fallback`. */
const errnoOf = (error: unknown, fallback: number): number => {
  const code = (error as NodeJS.ErrnoException).code
  return (code === undefined ? undefined : (NodeOs.constants.errno as Record<string, number>)[code]) ?? fallback
}

/** What the child's `chdir(cwd)`, its first step, would fail with; `undefined` if it would not. */
const chdirFailure = (cwd: string): number | undefined => {
  try {
    if (!NodeFs.statSync(cwd).isDirectory()) return ENOTDIR
    NodeFs.accessSync(cwd, NodeFs.constants.X_OK)
    return undefined
  } catch (error) {
    return errnoOf(error, ENOENT)
  }
}

/**
 * Where `file` is, found as glibc's `execvp` in the child of a `child_process` spawn finds it: by
 * `PATH` of the child's env (`/bin:/usr/bin` without one), relative entries from its `cwd`, passing
 * over the entries where no file can be executed by that name. Else the errno that spawn fails with:
 * its `chdir`'s, which comes first; else EACCES if an entry held `file` without the right to
 * execute it; else ENOENT.
 */
const resolveFile = (file: string, env: Readonly<Record<string, string>>, cwd: string): string | number => {
  if (file.includes("/")) return NodePath.resolve(cwd, file)
  let failure = ENOENT
  // Stringified as the child's env gets it (a host may pass a value that is no string).
  const search = env.PATH === undefined ? "/bin:/usr/bin" : `${env.PATH}`
  for (const dir of search.split(":")) {
    const path = NodePath.resolve(cwd, dir, file)
    try {
      // Most entries of a long PATH miss: a missing one costs no exception.
      const stat = NodeFs.statSync(path, { throwIfNoEntry: false })
      if (stat === undefined) continue
      if (stat.isFile()) {
        NodeFs.accessSync(path, NodeFs.constants.X_OK)
        return path
      }
      failure = EACCES // a directory
    } catch (error) {
      // ENOTDIR (an entry that is a file) moves on, as exec's does; EACCES is remembered.
      if (errnoOf(error, ENOENT) === EACCES) failure = EACCES
    }
  }
  return chdirFailure(cwd) ?? failure
}

type Koffi = typeof import("koffi").default

const bindLibc = (koffi: Koffi) => {
  const libc = koffi.load(null)
  return {
    socketpair: libc.func("int socketpair(int domain, int type, int protocol, _Out_ int *fds)"),
    close: libc.func("int close(int fd)"),
    actionsInit: libc.func("int posix_spawn_file_actions_init(void *actions)"),
    actionsDestroy: libc.func("int posix_spawn_file_actions_destroy(void *actions)"),
    addDup2: libc.func("int posix_spawn_file_actions_adddup2(void *actions, int fd, int target)"),
    addOpen: libc.func(
      "int posix_spawn_file_actions_addopen(void *actions, int fd, const char *path, int flags, int mode)"
    ),
    addChdir: libc.func("int posix_spawn_file_actions_addchdir_np(void *actions, const char *path)"),
    attrInit: libc.func("int posix_spawnattr_init(void *attr)"),
    attrSetFlags: libc.func("int posix_spawnattr_setflags(void *attr, short flags)"),
    attrSetSigDefault: libc.func("int posix_spawnattr_setsigdefault(void *attr, void *signals)"),
    attrSetSigMask: libc.func("int posix_spawnattr_setsigmask(void *attr, void *signals)"),
    sigFillSet: libc.func("int sigfillset(void *signals)"),
    sigEmptySet: libc.func("int sigemptyset(void *signals)"),
    spawn: libc.func(
      "int posix_spawn(_Out_ int *pid, const char *path, void *actions, void *attr, const char **argv, const char **envp)"
    ),
    waitpid: libc.func("int waitpid(int pid, _Out_ int *status, int options)"),
    errno: () => koffi.errno()
  }
}

type Libc = ReturnType<typeof bindLibc>

/**
 * Adds signals 32 and 33 to `set`, bit by bit: `sigfillset` leaves out the two signals glibc keeps
 * for itself (cancellation, `setxid`), and glibc's `posix_spawn` leaves them ignored in the child
 * unless they are in the default set, which keeps them ignored across the exec; a fork and exec
 * leaves them at their default. Bit `n - 1` of a set of native words, as glibc and musl lay it out
 * on a little-endian machine.
 */
const addLibcSignals = (set: Buffer): void => {
  if (NodeOs.endianness() !== "LE") return
  for (const signal of [32, 33]) set[(signal - 1) >> 3]! |= 1 << ((signal - 1) & 7)
}

/** The spawn attributes every child gets: a new session, default signal dispositions, no mask. */
const spawnAttributes = (libc: Libc): Buffer => {
  const attr = Buffer.alloc(opaqueBytes)
  const all = Buffer.alloc(opaqueBytes)
  const none = Buffer.alloc(opaqueBytes)
  libc.attrInit(attr)
  libc.sigFillSet(all)
  addLibcSignals(all)
  libc.sigEmptySet(none)
  libc.attrSetSigDefault(attr, all)
  libc.attrSetSigMask(attr, none)
  libc.attrSetFlags(attr, POSIX_SPAWN_SETSID | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK)
  return attr
}

/** The `envp` of `env`, made again only for a different env object (the executor's repeat). */
const envpOf = () => {
  let last: { readonly env: Readonly<Record<string, string>>; readonly envp: Array<string | null> | undefined } | undefined
  return (env: Readonly<Record<string, string>>): Array<string | null> | undefined => {
    if (last?.env !== env) {
      const envp: Array<string | null> = []
      let nul = false
      for (const key in env) {
        const value = env[key]
        if (value === undefined) continue
        const entry = `${key}=${value}`
        nul ||= hasNul(entry)
        envp.push(entry)
      }
      envp.push(null)
      last = { env, envp: nul ? undefined : envp }
    }
    return last.envp
  }
}

/**
 * The children still running and their reaping: on each `SIGCHLD`, `waitpid` (without waiting) for
 * each of them, and their `exit`. One for the process (a signal's listeners are the process's): its
 * listener is there while a layer uses it or a child runs, so no exit goes unseen (a `SIGCHLD` that
 * finds no listener is lost), even a child's spawned through a spawner whose layer has ended. While
 * a child runs, a timer that never fires keeps the host's event loop alive, as a running
 * `child_process` child does (a signal listener does not).
 */
const makeExitWatch = (libc: Libc) => {
  const running = new Map<number, PosixChild>()
  const status = [0]
  let users = 0
  let listening = false
  let keepAlive: NodeJS.Timeout | undefined
  // The listener and the timer follow the users and the running children, after each change.
  const follow = () => {
    const listen = users > 0 || running.size > 0
    if (listen !== listening) {
      listening = listen
      if (listen) {
        process.on("SIGCHLD", reap)
        // Added for a child just spawned (no layer uses the watch): its SIGCHLD may have come first.
        if (running.size > 0) setImmediate(reap)
      } else {
        process.off("SIGCHLD", reap)
      }
    }
    if (running.size === 0) {
      clearInterval(keepAlive)
      keepAlive = undefined
    } else {
      keepAlive ??= setInterval(() => {}, 2 ** 31 - 1)
    }
  }
  const reap = () => {
    for (const [pid, child] of running) {
      const reaped = libc.waitpid(pid, status, WNOHANG) as number
      if (reaped === 0) continue
      running.delete(pid)
      // -1: reaped by someone else (a `waitpid(-1)` in the host): the exit is unknown.
      if (reaped !== pid) child.settle(null, null)
      else if ((status[0]! & 0x7f) === 0) child.settle((status[0]! >> 8) & 0xff, null)
      else child.settle(null, signalNames.get(status[0]! & 0x7f) ?? null)
    }
    follow()
  }
  return {
    use: Effect.acquireRelease(
      Effect.sync(() => {
        users++
        follow()
      }),
      () =>
        Effect.sync(() => {
          users--
          follow()
        })
    ),
    watch: (child: PosixChild) => {
      running.set(child.pid, child)
      follow()
    }
  }
}

/**
 * The process's binding, spawn attributes and exit watch, made once (koffi's types and loaded
 * libraries are global).
 */
let loaded:
  | Promise<{ readonly libc: Libc; readonly attr: Buffer; readonly exits: ReturnType<typeof makeExitWatch> }>
  | undefined
const load = () =>
  loaded ??= import("koffi").then((koffi) => {
    const libc = bindLibc(koffi.default)
    return { libc, attr: spawnAttributes(libc), exits: makeExitWatch(libc) }
  })

/**
 * This host's `posix_spawn` for the scope; `undefined` where it cannot serve (not Linux, a worker
 * thread, koffi or a libc function missing), with the reason logged at debug level.
 */
export const makePosixSpawner: Effect.Effect<PosixSpawner | undefined, never, Scope.Scope> = Effect.gen(function*() {
  if (process.platform !== "linux") return undefined
  if (!isMainThread) {
    yield* Effect.logDebug("posix_spawn needs the main thread's SIGCHLD; commands are spawned by child_process")
    return undefined
  }
  const binding = yield* Effect.tryPromise(load).pipe(
    Effect.tapError((cause) =>
      Effect.logDebug("posix_spawn is not available; commands are spawned by child_process", cause)
    ),
    Effect.option
  )
  if (binding._tag === "None") return undefined
  const { attr, exits, libc } = binding.value
  yield* exits.use
  const envp = envpOf()
  const pair = [0, 0]
  const actions = Buffer.alloc(opaqueBytes)
  const pid = [0]

  const spawn = (request: PosixSpawnRequest): PosixChild | undefined => {
    const env = envp(request.env)
    if (env === undefined || hasNul(request.cwd) || request.args.some(hasNul) || hasNul(request.file)) {
      return undefined
    }
    const path = resolveFile(request.file, request.env, request.cwd)
    if (typeof path === "number") throw spawnError(request.file, path)
    const hostEnds: Array<number | null> = []
    const childEnds: Array<number> = []
    let started = false
    libc.actionsInit(actions)
    try {
      // The pipes first, each dup2 reading a socket end the host just made; then `/dev/null` opened
      // at the ignored standard descriptors and over the masked ones (a number in the list), which
      // reads no descriptor. A socket end at a number a pipe goes to would be overwritten before
      // its own dup2: such a rare request is left to Node.
      for (let fd = 0; fd < request.stdio.length; fd++) {
        if (request.stdio[fd] !== "pipe") {
          hostEnds.push(null)
          continue
        }
        if (libc.socketpair(AF_UNIX, SOCK_STREAM | O_CLOEXEC, 0, pair) !== 0) {
          throw spawnError(request.file, libc.errno())
        }
        hostEnds.push(pair[0]!)
        childEnds.push(pair[1]!)
        libc.addDup2(actions, pair[1]!, fd)
      }
      if (childEnds.some((fd) => request.stdio[fd] === "pipe")) return undefined
      for (let fd = 0; fd < request.stdio.length; fd++) {
        const entry = request.stdio[fd]
        if (typeof entry === "number" || (entry === "ignore" && fd <= 2)) {
          libc.addOpen(actions, fd, "/dev/null", fd === 1 || fd === 2 ? O_RDWR : O_RDONLY, 0)
        }
      }
      libc.addChdir(actions, request.cwd)
      const failed = libc.spawn(pid, path, actions, attr, [request.file, ...request.args, null], env) as number
      if (failed !== 0) throw spawnError(request.file, failed)
      started = true
    } finally {
      libc.actionsDestroy(actions)
      for (const fd of childEnds) libc.close(fd)
      if (!started) for (const fd of hostEnds) if (fd !== null) libc.close(fd)
    }
    const child = new PosixChild(
      pid[0]!,
      hostEnds.map((fd, index) => {
        if (fd === null) return null
        const output = index === 1 || index === 2
        return new NodeNet.Socket({ fd, readable: output, writable: !output })
      })
    )
    exits.watch(child)
    return child
  }
  return { spawn }
})
