/**
 * The production {@link PtySpawner} over `node-pty`, an optional peer: it is loaded when the first
 * terminal opens, so the rest of the package needs no native module. The facts about a terminal's
 * processes come from Linux's `/proc`. A host that dies without running its finalizers (SIGKILL)
 * takes its terminals along: the layer's host-death reaper kills every process of each terminal
 * still open (see `internal/spawner/reaperProcess.ts`).
 *
 * @since 0.2.0
 */
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Scope from "effect/Scope"
import * as NodeFs from "node:fs"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"
import type { ProcessSpawner } from "../services/ProcessSpawner.js"
import { PtySpawner, PtySpawnError } from "../services/PtySpawner.js"
import type { HostReaper } from "./internal/spawner/HostReaper.js"
import { makeReaperProcess } from "./internal/spawner/reaperProcess.js"
import { runnerExitedText, runnerSlowText } from "./internal/terminal/confinementTexts.js"
import { childrenOf, foregroundOf, ptsOf, refreshMembers, signalMembers } from "./internal/terminal/procTerminal.js"

type NodePty = typeof import("node-pty")

let loaded: Promise<NodePty> | undefined

// `node-pty` is CommonJS: its functions are on the namespace or on its default export.
const loadNodePty = Effect.tryPromise({
  try: () =>
    loaded ??= import("node-pty").then((module) =>
      (module as NodePty & { readonly default?: NodePty }).default ?? module
    ),
  catch: (cause) =>
    new PtySpawnError({
      message: "terminals need the optional peer dependency node-pty: install it with `npm install node-pty`",
      cause
    })
})

/**
 * Whether `node-pty` can be loaded here (e.g. to offer terminals only where they can open).
 *
 * @since 0.2.0
 * @category utils
 */
export const available: Effect.Effect<boolean> = Effect.match(loadNodePty, {
  onFailure: () => false,
  onSuccess: () => true
})

const checkCwd = (cwd: string) =>
  Effect.try({
    try: () => {
      if (!NodeFs.statSync(cwd).isDirectory()) throw new Error("not a directory")
    },
    catch: () => new PtySpawnError({ message: `working directory ${cwd} does not exist or is not a directory` })
  })

/** How long a runner may take to start its command (bubblewrap takes some 10 to 20 ms). */
const runnerStartMs = 10_000
const runnerPollMs = 5

/**
 * The runner's input (bytes it reads from a descriptor, such as bubblewrap's seccomp filter): a PTY
 * passes no descriptor but its own, so the bytes go to a private file, which a shell opens on the
 * descriptor before it becomes the runner. Removed with the terminal.
 */
const inputOpener = (input: NonNullable<ProcessSpawner.Wrapper["input"]>) =>
  Effect.map(
    Effect.acquireRelease(
      Effect.try({
        try: () => {
          const dir = NodeFs.mkdtempSync(NodePath.join(NodeOs.tmpdir(), "effect-bash-pty-"))
          NodeFs.writeFileSync(NodePath.join(dir, "input"), input.bytes, { mode: 0o400 })
          return dir
        },
        catch: (cause) => new PtySpawnError({ message: "could not write the runner's input", cause })
      }),
      (dir) => Effect.sync(() => NodeFs.rmSync(dir, { recursive: true, force: true }))
    ),
    (dir): ReadonlyArray<string> => [
      "/bin/sh",
      "-c",
      `exec ${input.fd}<"$1" || exit 126; shift; exec "$@"`,
      "effect-bash-input",
      NodePath.join(dir, "input")
    ]
  )

/** The argv that starts `options.file` on the PTY: through its runner when it has one. */
const argvOf = (options: PtySpawner.Options): Effect.Effect<ReadonlyArray<string>, PtySpawnError, Scope.Scope> => {
  const command = [options.file, ...options.args]
  const wrapper = options.wrapper
  if (wrapper === undefined) return Effect.succeed(command)
  const input = wrapper.input
  if (input === undefined) return Effect.succeed([...wrapper.argv, ...command])
  return Effect.map(inputOpener(input), (opener) => [...opener, ...wrapper.argv, ...command])
}

/** The first line a failed runner printed (e.g. `bwrap: Can't chdir …`). */
const firstLine = (output: string): string | undefined =>
  output.split(/\r?\n|\r/).map((line) => line.trim()).find((line) => line !== "")

/**
 * The runner's command, once started: under a PID namespace the runner's grandchild (bubblewrap's
 * init is between them), else its child. Fails when the runner exits first or takes too long.
 */
const awaitCommand = (
  runner: number,
  pidNamespace: boolean,
  started: { readonly exited: boolean; readonly text: string }
): Effect.Effect<{ readonly pid: number; readonly between: ReadonlyArray<number> }, PtySpawnError> => {
  const look = Effect.suspend((): Effect.Effect<{ readonly pid: number; readonly between: ReadonlyArray<number> } | undefined, PtySpawnError> => {
    if (started.exited) {
      const line = firstLine(started.text)
      return Effect.fail(new PtySpawnError({ message: runnerExitedText(line) }))
    }
    const child = childrenOf(runner)[0]
    if (child === undefined) return Effect.succeed(undefined)
    if (!pidNamespace) return Effect.succeed({ pid: child, between: [] })
    const command = childrenOf(child)[0]
    return Effect.succeed(command === undefined ? undefined : { pid: command, between: [child] })
  })
  const poll: Effect.Effect<{ readonly pid: number; readonly between: ReadonlyArray<number> }, PtySpawnError> =
    Effect.flatMap(look, (found) =>
      found !== undefined ? Effect.succeed(found) : Effect.zipRight(Effect.sleep(Duration.millis(runnerPollMs)), poll))
  return Effect.timeoutFail(poll, {
    duration: Duration.millis(runnerStartMs),
    onTimeout: () => new PtySpawnError({ message: runnerSlowText(runnerStartMs) })
  })
}

/**
 * Keeps the PTY's device open until the terminal is released, and on release SIGKILLs whatever of
 * the terminal is left (found afresh: a runner that never started its shell was never looked for)
 * before letting the device go. The processes of a terminal are found by the device they hold; once
 * every process had closed it and node-pty its end, the kernel could give the same name to the next
 * terminal, whose processes a late look of this one would then take for its own (bubblewrap, which
 * dies on TERM, with its whole sandbox). Opened without becoming a controlling terminal; node-pty
 * then reports an exit after its 200 ms wait for the device's end.
 */
const holdDevice = (leader: number, pts: string | undefined, members: Map<number, string>) =>
  Effect.acquireRelease(
    Effect.sync(() => {
      if (pts === undefined) return undefined
      try {
        const { O_NOCTTY, O_NONBLOCK, O_RDWR } = NodeFs.constants
        return NodeFs.openSync(pts, O_RDWR | O_NOCTTY | O_NONBLOCK)
      } catch {
        return undefined
      }
    }),
    (fd) =>
      Effect.sync(() => {
        refreshMembers(leader, pts, members)
        signalMembers(members, "SIGKILL")
        if (fd !== undefined) NodeFs.closeSync(fd)
      })
  )

const spawnWith = (reaper: HostReaper["Type"]) => (options: PtySpawner.Options) =>
  Effect.gen(function*() {
    const nodePty = yield* loadNodePty
    yield* checkCwd(options.cwd)
    const [file, ...args] = yield* argvOf(options)
    const term = yield* Effect.acquireRelease(
      Effect.try({
        try: () =>
          nodePty.spawn(file!, args, {
            name: options.env.TERM ?? "xterm",
            cols: options.cols,
            rows: options.rows,
            cwd: options.cwd,
            env: { ...options.env }
          }),
        catch: (cause) => new PtySpawnError({ message: `could not start ${options.file} on a PTY`, cause })
      }),
      // After the device's hold is released, which kills whatever of the terminal is left.
      (term) => Effect.sync(() => (term as unknown as { readonly destroy?: () => void }).destroy?.())
    )
    const members = new Map<number, string>()
    // node-pty names the PTY's device; reading the child's stdin could race its `login_tty`.
    const pts = (term as unknown as { readonly ptsName?: string }).ptsName ?? ptsOf(term.pid)
    // Released in reverse: the hold's kill first, then the reaper forgets the terminal.
    if (pts !== undefined) {
      yield* Effect.acquireRelease(reaper.trackTerminal(term.pid, pts), () => reaper.forget(term.pid))
    }
    yield* holdDevice(term.pid, pts, members)
    // Until a runner's command is up, what it prints is kept too: a runner that fails says why there.
    const starting = { exited: false, text: "", keeping: options.wrapper !== undefined }
    term.onData((chunk) => {
      if (starting.keeping && starting.text.length < 4096) starting.text += chunk
      // Not read past the receiver's budget: the kernel's buffer fills and the writer blocks. node-pty
      // drops its end 200 ms after the leader's exit, so the receiver must catch up within that.
      if (!options.onData(chunk)) term.pause()
    })
    term.onExit(({ exitCode, signal }) => {
      starting.exited = true
      options.onExit({ exitCode: signal ? null : exitCode, signal: signal ? signalName(signal) : null })
    })
    // The runner and what it put between itself and the shell are spared a TERM: their death would
    // take the shell's processes along before those could handle it. KILL reaches them all.
    const command = options.wrapper === undefined
      ? { pid: term.pid, between: [] }
      : yield* awaitCommand(term.pid, options.wrapper.pidNamespace, starting).pipe(
        Effect.interruptible
      )
    starting.keeping = false
    const shell = command.pid
    const runners: ReadonlySet<number> = options.wrapper === undefined ? new Set() : new Set([term.pid, ...command.between])
    const pty: PtySpawner.Pty = {
      pid: shell,
      write: (data) => Effect.sync(() => term.write(data)),
      resume: Effect.sync(() => term.resume()),
      foreground: Effect.sync(() => pts === undefined ? undefined : foregroundOf(shell, pts)),
      catchUp: ioTurn,
      signalGroup: (pgid, signal) =>
        Effect.sync(() => {
          try {
            process.kill(-pgid, signal)
            return true
          } catch {
            return false
          }
        }),
      signalAll: (signal) =>
        Effect.sync(() => {
          refreshMembers(term.pid, pts, members)
          signalMembers(members, signal, signal === "SIGKILL" ? undefined : runners)
          return members.size
        }),
      alive: Effect.sync(() => {
        refreshMembers(term.pid, pts, members)
        return members.size
      }),
      othersAlive: Effect.sync(() => {
        refreshMembers(term.pid, pts, members)
        return [...members.keys()].filter((pid) => pid !== shell && !runners.has(pid)).length
      })
    }
    return pty
  })

/**
 * A full turn of the event loop, no time: the second immediate is queued from the loop's check
 * phase, so an I/O poll runs between the two whatever phase this starts in. A PTY that is read
 * and had output ready when the turn began has then handed `onData` a read of it.
 */
const ioTurn: Effect.Effect<void> = Effect.async<void>((resume) => {
  let pending = setImmediate(() => {
    pending = setImmediate(() => resume(Effect.void))
  })
  return Effect.sync(() => clearImmediate(pending))
})

const signalName = (signal: number): string =>
  Object.entries(NodeOs.constants.signals).find(([, number]) => number === signal)?.[0] ?? String(signal)

/**
 * The PTY spawner over `node-pty`, with its host-death reaper (a small process started with the
 * first terminal, told goodbye when the layer closes).
 *
 * @since 0.2.0
 * @category layers
 */
export const layer: Layer.Layer<PtySpawner> = Layer.scoped(
  PtySpawner,
  Effect.map(makeReaperProcess, ({ reaper }) => PtySpawner.of({ spawn: spawnWith(reaper) }))
)

