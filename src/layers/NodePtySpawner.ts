/**
 * The production {@link PtySpawner} over `node-pty`, an optional peer: it is loaded when the first
 * terminal opens, so the rest of the package needs no native module. The facts about a terminal's
 * processes come from Linux's `/proc`. A host that dies without running its finalizers (SIGKILL)
 * takes its terminals along: the layer's host-death reaper kills every process of each terminal
 * still open (see `internal/spawner/reaperProcess.ts`).
 *
 * @since 0.2.0
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as NodeFs from "node:fs"
import * as NodeOs from "node:os"
import { PtySpawner, PtySpawnError } from "../services/PtySpawner.js"
import type { HostReaper } from "./internal/spawner/HostReaper.js"
import { makeReaperProcess } from "./internal/spawner/reaperProcess.js"
import { foregroundOf, ptsOf, refreshMembers, signalMembers } from "./internal/terminal/procTerminal.js"

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

const spawnWith = (reaper: HostReaper["Type"]) => (options: PtySpawner.Options) =>
  Effect.gen(function*() {
    const nodePty = yield* loadNodePty
    yield* checkCwd(options.cwd)
    const term = yield* Effect.acquireRelease(
      Effect.try({
        try: () =>
          nodePty.spawn(options.file, [...options.args], {
            name: options.env.TERM ?? "xterm",
            cols: options.cols,
            rows: options.rows,
            cwd: options.cwd,
            env: { ...options.env }
          }),
        catch: (cause) => new PtySpawnError({ message: `could not start ${options.file} on a PTY`, cause })
      }),
      (term) =>
        Effect.sync(() => {
          // Whatever close left behind, and the PTY itself.
          signalMembers(members, "SIGKILL")
          ;(term as unknown as { readonly destroy?: () => void }).destroy?.()
        }).pipe(Effect.zipRight(reaper.forget(term.pid)))
    )
    const members = new Map<number, string>()
    // node-pty names the PTY's device; reading the child's stdin could race its `login_tty`.
    const pts = (term as unknown as { readonly ptsName?: string }).ptsName ?? ptsOf(term.pid)
    if (pts !== undefined) yield* reaper.trackTerminal(term.pid, pts)
    term.onData(options.onData)
    term.onExit(({ exitCode, signal }) =>
      options.onExit({ exitCode: signal ? null : exitCode, signal: signal ? signalName(signal) : null })
    )
    const pty: PtySpawner.Pty = {
      pid: term.pid,
      write: (data) => Effect.sync(() => term.write(data)),
      foreground: Effect.sync(() => pts === undefined ? undefined : foregroundOf(term.pid, pts)),
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
          signalMembers(members, signal)
          return members.size
        }),
      alive: Effect.sync(() => {
        refreshMembers(term.pid, pts, members)
        return members.size
      })
    }
    return pty
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
