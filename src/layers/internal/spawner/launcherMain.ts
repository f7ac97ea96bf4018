/**
 * The launcher's program: a small Node process, one per spawner layer, that spawns commands on the
 * host's behalf (the host's side is `Launcher.ts`). The host starts it as
 * `node --single-threaded --max-semi-space-size=1 launcherMain.js <gate text> <tmpdir>`, in its own
 * session, with `/` as cwd and only `PATH` in its env.
 *
 * Descriptors:
 * - 0: a socket pair the host holds and never writes. Its end (EOF or an error) means the host died.
 * - 1: the pid lines, `<id> <pid>\n` per launched command, read by the host.
 * - 2: /dev/null.
 * - 3: the IPC channel (JSON), not close-on-exec: each child gets /dev/null there (or its script pipe),
 *   which its gate closes.
 * - 4 and up: /dev/null where the host inherited a descriptor, so that the children inherit /dev/null.
 *
 * Messages, each told apart by its `_tag`. Host → launcher ({@link HostMessage}): `Launch`
 * ({@link LaunchMessage}: an `id`, the file, argv, cwd, stdio kinds, stdin and script; the env only when
 * it is not the last launch's; the groups forgotten since the last message), `Forget` alone, and
 * `Goodbye` before it closes.
 *
 * Launcher → host ({@link LauncherMessage}): `Ready` once; per launch either `SpawnFailed` (nothing
 * started) or, in this order, `Started` (the pid) with the child's stdout as handle, `Stderr` with its
 * stderr as handle, and `Exited` (code and signal).
 *
 * The order of one launch keeps "no command runs before the host has its pid" (its owner is
 * `gate.ts`): the child is spawned waiting in its gate; the pid line is written to fd 1,
 * synchronously, so the host has it even if the launcher dies next; only then the admission goes into
 * the child's stdout socket, which the gate reads on its fd 1, then stdin and the script; then the
 * pipes are handed over. A pid line the host cannot read (EPIPE) means the host is gone: the launcher
 * ends, and the waiting command never runs.
 *
 * Host death: the launcher is the reaper of the commands it started. It remembers the group of each
 * until the host forgets it (the host saw the group gone). If the host's end shows without a goodbye,
 * every remembered group is SIGKILLed (`reaperProcess.ts` is the reaper of the groups the host spawns
 * itself).
 *
 * @internal
 */
import * as ChildProcess from "node:child_process"
import * as NodeFs from "node:fs"
import type { Socket } from "node:net"
import type { Readable, Writable } from "node:stream"
import { admission } from "./gate.js"

type Env = Readonly<Record<string, string>>

/** A launch: what the host decided about one spawn (the env is the last one sent when absent). */
export interface LaunchMessage {
  readonly _tag: "Launch"
  readonly id: number
  readonly file: string
  readonly args: ReadonlyArray<string>
  readonly cwd: string
  /** stdin's kind, and fd 3's when it carries a script; stdout and stderr are always pipes. */
  readonly stdio: ReadonlyArray<"pipe" | "ignore">
  readonly env?: Env
  readonly stdin?: string | undefined
  /** Bytes for stdin: JSON carries text, so they travel as base64. */
  readonly stdinBase64?: string | undefined
  /** A script too long for argv, written to the child's fd 3. */
  readonly script?: string | undefined
  readonly forget?: ReadonlyArray<number>
}

/** What the host sends. */
export type HostMessage =
  | LaunchMessage
  | { readonly _tag: "Forget"; readonly forget: ReadonlyArray<number> }
  | { readonly _tag: "Goodbye" }

/** What the launcher sends. */
export type LauncherMessage =
  | { readonly _tag: "Ready" }
  | { readonly _tag: "SpawnFailed"; readonly id: number; readonly code: string | undefined; readonly message: string }
  | { readonly _tag: "Started"; readonly id: number; readonly pid: number }
  | { readonly _tag: "Stderr"; readonly id: number }
  | { readonly _tag: "Exited"; readonly id: number; readonly exit: readonly [number | null, NodeJS.Signals | null] }

const ignore = () => {}

/**
 * Keeps every byte of a child's pipe in the pipe, for the host: Node starts reading a new child's
 * pipes in the tick that spawned it (it reads nothing before that tick ends), and a handle waits in
 * the channel's queue until the host acknowledges the previous one. `Socket.pause()` stops the
 * stream's flow but not the handle's reads, and `child_process` offers no socket option to start
 * paused: the reads are stopped on the socket's handle.
 */
const holdForHost = (stream: Readable | null | undefined): void => {
  const handle = (stream as { readonly _handle?: { readonly readStop?: () => number } } | null | undefined)?._handle
  handle?.readStop?.()
}

/**
 * Admits a child: the admission line goes into the launcher's end of its stdout socket pair, which
 * the gate reads on its fd 1. Written on the socket's descriptor, not through the stream, so a child
 * killed meanwhile (EPIPE) leaves the stream whole, to be handed over as any other; a stream without a
 * descriptor throws, and the launcher ends (the host then kills the stranded command).
 */
const admit = (stdout: Readable): void => {
  const fd = (stdout as { readonly _handle?: { readonly fd?: number } })._handle?.fd
  if (fd === undefined) throw new Error("a child's stdout has no descriptor for its admission")
  try {
    NodeFs.writeSync(fd, admission)
  } catch {
    // Gone already: its exit is reported as usual.
  }
}

const main = (gate: string, tmpdir: string): void => {
  process.title = "effect-bash launcher"
  // A child's pipe is a socket (libuv's process pipes are socket pairs), which the channel carries.
  const send = (message: LauncherMessage, handle?: Readable | null) =>
    process.send!(message, (handle ?? undefined) as Socket | undefined)
  const failed = (id: number, error: unknown) => {
    const { code, message } = error as { readonly code?: unknown; readonly message?: unknown }
    send({ _tag: "SpawnFailed", id, code: typeof code === "string" ? code : undefined, message: String(message) })
  }
  const devNull = NodeFs.openSync("/dev/null", "r")
  // The gate file: nameless (O_TMPFILE) and held read-only, so no command can name, write or remove it.
  const gateWritable = NodeFs.openSync(
    tmpdir,
    0o20000000 | NodeFs.constants.O_DIRECTORY | NodeFs.constants.O_WRONLY,
    0o400
  )
  NodeFs.writeSync(gateWritable, gate)
  const gateFile = NodeFs.openSync(`/proc/self/fd/${gateWritable}`, "r")
  NodeFs.closeSync(gateWritable)

  // The last request's env.
  let env: Env = {}
  // The groups of the commands it started, until the host forgets each (it saw the group gone): they
  // are killed if the host ends without its goodbye (it died).
  const groups = new Set<number>()
  let goodbye = false

  // The host's end: without a goodbye every group still remembered is killed.
  const ended = () => {
    if (!goodbye) {
      for (const pgid of groups) {
        try {
          process.kill(-pgid, "SIGKILL")
        } catch {
          // Gone already.
        }
      }
    }
    process.exit(0)
  }

  const launch = (m: LaunchMessage) => {
    if (m.env !== undefined) env = m.env
    let child: ChildProcess.ChildProcess
    try {
      // stdout and stderr are pipes whatever the message says: the host reads them, and the gate
      // reads its admission on fd 1.
      const stdio: Array<ChildProcess.IOType | number> = [
        m.stdio[0] ?? "ignore",
        "pipe",
        "pipe",
        ...(m.stdio.length > 3 ? m.stdio.slice(3) : [devNull]),
        // fd 4 as a direct spawn has it once the gate has run (it closes it, or keeps /dev/null).
        devNull,
        gateFile
      ]
      child = ChildProcess.spawn(m.file, m.args, { cwd: m.cwd, env, detached: true, stdio })
    } catch (error) {
      return failed(m.id, error)
    }
    if (child.pid === undefined) return void child.once("error", (error) => failed(m.id, error))
    child.on("error", ignore)
    holdForHost(child.stdout)
    holdForHost(child.stderr)
    const pid = child.pid
    groups.add(pid)
    try {
      NodeFs.writeSync(1, `${m.id} ${pid}\n`)
    } catch {
      return ended()
    }
    admit(child.stdout!)
    const stdin = m.stdinBase64 === undefined ? m.stdin : Buffer.from(m.stdinBase64, "base64")
    const writes: ReadonlyArray<readonly [unknown, string | Buffer | undefined]> = [
      [child.stdin, stdin],
      [child.stdio[3], m.script]
    ]
    for (const [stream, text] of writes) {
      if (text === undefined || stream === null || stream === undefined) continue
      const writable = stream as Writable
      writable.on("error", ignore)
      writable.end(text)
    }
    send({ _tag: "Started", id: m.id, pid }, child.stdout)
    send({ _tag: "Stderr", id: m.id }, child.stderr)
    child.once("exit", (code, signal) => send({ _tag: "Exited", id: m.id, exit: [code, signal] }))
  }

  process.on("message", (m: HostMessage) => {
    switch (m._tag) {
      case "Launch":
        for (const pgid of m.forget ?? []) groups.delete(pgid)
        return launch(m)
      case "Forget":
        for (const pgid of m.forget) groups.delete(pgid)
        return
      case "Goodbye":
        goodbye = true
    }
  })
  // The host's end shows on its stdin as well as on the channel: Node holds a channel's `disconnect`
  // back while a handle it sent waits for its acknowledgement, which a dead host never sends. A send
  // on a closed channel is reported as an `error`: the end is seen here.
  process.stdin.on("data", ignore).on("end", ended).on("error", ended)
  process.on("disconnect", ended)
  process.on("error", ignore)
  // A host that closed while this program loaded was seen by no listener: its end is here already.
  if (!process.connected) return ended()
  send({ _tag: "Ready" })
}

main(process.argv[2] ?? "", process.argv[3] ?? "")
