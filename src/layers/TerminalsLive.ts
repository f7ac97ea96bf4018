/**
 * The {@link Terminals} service over a {@link PtySpawner}: interactive bash shells on PTYs, each
 * owned by the session that opened it, with the executor's scrubbed environment, bounded scrollback
 * and send results, caps on how many are open, and close that leaves none of their processes
 * behind. Closing the layer closes every terminal. With a `BashExecutor` in context, a shell runs
 * where that executor runs a call of its owner (the sandbox's bubblewrap, with the owner's mode
 * from `SandboxSessions` when present; a container executor's session box, on the engine's TTY).
 *
 * @since 0.2.0
 */
import type * as Scope from "effect/Scope"
import * as ConfigError from "effect/ConfigError"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as ExecutionStrategy from "effect/ExecutionStrategy"
import * as Exit from "effect/Exit"
import * as FiberSet from "effect/FiberSet"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as ScopeModule from "effect/Scope"
import * as NodePath from "node:path"
import { BashExecutor } from "../services/BashExecutor.js"
import { PtySpawner } from "../services/PtySpawner.js"
import { SandboxSessions } from "../services/SandboxSessions.js"
import { canonicalDirSync } from "./internal/sandbox/canonicalDir.js"
import { unconfinableText } from "./internal/terminal/confinementTexts.js"
import { terminalPlacementOf } from "./internal/terminal/placement.js"
import { TerminalError, Terminals } from "../services/Terminals.js"
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import * as NodePlatformPath from "@effect/platform-node/NodePath"
import { makeEnvBuilder, validateEnv } from "./internal/executor/environment.js"
import { makeSpillStore } from "./internal/executor/SpillStore.js"
import { PtyInbox } from "./internal/terminal/ptyInbox.js"
import { TerminalSession } from "./internal/terminal/session.js"
import { Transcript } from "./internal/terminal/transcript.js"
import { shellArgs, shellFile, terminalVariables } from "./internal/terminal/shellSetup.js"
import { decodeSettings, PositiveFinite, PositiveInt } from "./settingsSchema.js"

const positive = (value: number) => Schema.optionalWith(PositiveFinite, { default: () => value })
const count = (value: number) => Schema.optionalWith(PositiveInt, { default: () => value })

/**
 * The terminals' settings: each optional on input, filled with its default on decoding; a bad value
 * fails the layer with a `ConfigError` naming the field. Times are in ms of the Clock.
 *
 * @since 0.2.0
 * @category schemas
 */
export const Settings = Schema.Struct({
  /** Where a terminal starts when the caller names no directory (default: the current directory). */
  cwd: Schema.optional(Schema.String),
  /** `TERM` in the shell. */
  term: Schema.optionalWith(Schema.String, { default: () => "xterm-256color" }),
  rows: count(40),
  cols: count(160),
  /** Lines and bytes of scrollback kept per terminal (the newest). */
  scrollbackLines: count(10_000),
  scrollbackMaxBytes: count(4 * 1024 * 1024),
  /**
   * Output held between a terminal's PTY and its scrollback, in bytes: at this bound the PTY is not
   * read until the terminal has caught up, so a flood's writer waits instead of the host's memory growing.
   */
  outputBufferBytes: count(1024 * 1024),
  /** The most a send result or a scrollback page holds, in bytes (the newest). */
  maxReadBytes: count(256 * 1024),
  /**
   * Parent of the spill directory, where a terminal's whole transcript goes once its scrollback drops
   * output (default: the OS temp directory). The directory is removed with the layer.
   */
  spillParent: Schema.optional(Schema.String),
  /** Largest transcript file; past it the file is removed and only the scrollback is left. */
  maxSpillBytes: count(64 * 1024 * 1024),
  /** Bound on the layer's transcript files together: one that would cross it is not written. */
  maxSpillTotalBytes: count(1024 * 1024 * 1024),
  pollIntervalMs: positive(50),
  /** How long after the write a foreground group's input wait may settle a send. */
  exactProbeAfterMs: positive(150),
  /** Output silence that settles a send as `inferred_idle`. */
  idleSilenceMs: positive(3_000),
  /** Extra silence after a prompt marker, for the shell to take the foreground back. */
  handoffGraceMs: positive(500),
  /** The absolute bound of a send. */
  timeoutMs: positive(30_000),
  /** The absolute bound of a shell's start, until its first prompt. */
  startupTimeoutMs: positive(10_000),
  /** How long close waits after TERM before KILL. */
  closeGraceMs: positive(3_000),
  /** How long close waits for KILLed processes to be gone. */
  killWaitMs: positive(2_000),
  /** Open terminals per session, and in the whole layer. */
  maxPerSession: count(8),
  maxTotal: count(32),
  /** The executor's environment scrub: names kept although they look like credentials, extra patterns dropped. */
  envAllow: Schema.optionalWith(Schema.Array(Schema.String), { default: () => [] }),
  envDeny: Schema.optionalWith(Schema.Array(Schema.String), { default: () => [] })
}).annotations({ identifier: "TerminalsLive.Settings" })

/**
 * Every setting of the terminals, defaults filled in.
 *
 * @since 0.2.0
 * @category models
 */
export interface Settings extends Schema.Schema.Type<typeof Settings> {}

/**
 * @since 0.2.0
 * @category models
 */
export declare namespace Settings {
  /**
   * What a user gives: any subset of the settings.
   *
   * @since 0.2.0
   * @category models
   */
  export type Input = Schema.Schema.Encoded<typeof Settings>
}

/**
 * The refusal when the calling session already has `max` open terminals.
 *
 * @since 0.2.0
 * @category constants
 */
export const sessionLimitMessage = (max: number): string =>
  `terminal limit reached: this session already has ${max} open terminal sessions; close one with terminal_close first`

/**
 * The refusal when the layer already has `max` open terminals.
 *
 * @since 0.2.0
 * @category constants
 */
export const layerLimitMessage = (max: number): string =>
  `terminal limit reached: ${max} terminal sessions are open on this host; close one with terminal_close first`

interface Entry {
  readonly session: TerminalSession
  readonly scope: ScopeModule.CloseableScope
  published: boolean
}

const fail = (reason: TerminalError["reason"], message: string) => Effect.fail(new TerminalError({ reason, message }))

const isSafeCount = (value: number, min: number) => Number.isSafeInteger(value) && value >= min

/**
 * Where the terminals' shells run: under the `BashExecutor` in context, as one of its calls would (a
 * sandbox's bubblewrap with the owner's standing mode, its masks and network; a container's box, on
 * a PTY of the executor's own); with none, on the host. A confining executor that cannot place a
 * shell fails the layer: never silently unconfined.
 */
const placement = Effect.gen(function*() {
  const executor = yield* Effect.serviceOption(BashExecutor)
  if (Option.isNone(executor)) return undefined
  const placed = terminalPlacementOf(executor.value)
  if (placed === undefined) {
    if (executor.value.sandboxMode === undefined && executor.value.container === undefined) return undefined
    return yield* Effect.fail(ConfigError.Unsupported(["terminals"], unconfinableText))
  }
  const sessions = yield* Effect.serviceOption(SandboxSessions)
  const service = executor.value
  const launch = (owner: string | undefined, cwd: string) =>
    Effect.gen(function*() {
      const mode = Option.isSome(sessions) ? yield* sessions.value.standingMode(owner) : service.sandboxMode
      const networkAllow = Option.isSome(sessions) ? yield* sessions.value.networkOf(owner) : []
      // The writable root is the executor's, never one the model names with a terminal's cwd.
      const workspaceRoot = service.workspaceRoot ?? canonicalDirSync(yield* service.defaultWorkdir)
      const spec = yield* service.resolve({
        command: shellFile,
        workdir: cwd,
        ...(owner === undefined ? {} : { owner }),
        ...(mode === undefined
          ? {}
          : { sandboxPolicy: { mode, workspaceRoot, ...(networkAllow.length === 0 ? {} : { networkAllow }) } })
      })
      return yield* placed.launch(spec)
    })
  return { launch, defaultWorkdir: service.defaultWorkdir, spawn: placed.spawn, inheritedEnv: placed.inheritedEnv }
})

const start = (config: Settings) =>
  Effect.gen(function*() {
    const spawner = yield* PtySpawner
    const placed = yield* placement
    // Made before the terminals' finalizer: closed after it, once every transcript is removed.
    const spills = yield* makeSpillStore({
      keep: false,
      maxTotalBytes: config.maxSpillTotalBytes,
      ...(config.spillParent !== undefined ? { parent: config.spillParent } : {})
    }).pipe(Effect.provide(NodeFileSystem.layer), Effect.provide(NodePlatformPath.layer))
    const layerScope = yield* Effect.scope
    const background = yield* FiberSet.make<void>()
    const buildEnv = makeEnvBuilder({
      allow: config.envAllow,
      deny: config.envDeny.map((pattern) => new RegExp(pattern, "i"))
    })
    const entries = new Map<string, Entry>()
    let counter = 0
    let accepting = true

    const lookup = (owner: string | undefined, id: string) =>
      Effect.suspend(() => {
        const entry = entries.get(id)
        if (entry === undefined || !entry.published) return fail("unknown", `unknown PTY session ${id}`)
        if (entry.session.owner !== owner) return fail("foreign", `PTY session ${id} belongs to another agent`)
        return Effect.succeed(entry)
      })

    // Runs uninterruptibly to the end once started: a close must not leave half of a terminal.
    const closeEntry = (entry: Entry): Effect.Effect<"closed" | "already-closing"> =>
      Effect.uninterruptible(Effect.gen(function*() {
        const session = entry.session
        if (session.closing !== undefined) {
          yield* Deferred.await(session.closing)
          return "already-closing" as const
        }
        const closing = yield* Deferred.make<void>()
        session.closing = closing
        const left = yield* session.terminate()
        if (left > 0) yield* Effect.logWarning(`PTY session ${session.id}: ${left} processes still alive after SIGKILL`)
        yield* Effect.logDebug(`PTY session ${session.id}: output flow`).pipe(Effect.annotateLogs({
          "terminal.outputHighWaterBytes": session.inbox.highWater,
          "terminal.outputPauses": session.inbox.pauses
        }))
        yield* ScopeModule.close(entry.scope, Exit.void)
        if (session.status.kind === "running") session.status = { kind: "exited", exitCode: null, signal: null }
        yield* Deferred.done(session.exited, Exit.void)
        entries.delete(session.id)
        yield* Deferred.done(closing, Exit.void)
        return "closed" as const
      }))

    yield* Effect.addFinalizer(() =>
      Effect.suspend(() => {
        accepting = false
        return Effect.forEach([...entries.values()], closeEntry, { concurrency: "unbounded", discard: true })
      })
    )

    // Opens under way, by id: they count against the caps and hold their name from the check on, so
    // opens racing through a spawn that waits (node-pty loading) cannot pass a cap together.
    const reserved = new Map<string, { readonly owner: string | undefined; readonly name: string | undefined }>()

    /** The open terminals and opens under way (an exited shell counts until it is closed: its scrollback is held). */
    const holders = () => [
      ...[...entries.values()].filter((entry) => entry.session.closing === undefined).map(({ session }) => session),
      ...[...reserved].filter(([id]) => !entries.has(id)).map(([, holder]) => holder)
    ]

    /** Checks the request and the caps, then reserves a place under a fresh id. */
    const reserve = (owner: string | undefined, options: Terminals.OpenOptions) =>
      Effect.suspend(() => {
        if (!accepting) return fail("unavailable", "PTY service is disposing")
        if (options.type !== "shell") return fail("no-backend", `no PTY backend registered for "${options.type}"`)
        const envProblem = validateEnv(options.env, options.dshEnv)
        if (envProblem !== undefined) return fail("invalid", envProblem.message)
        const held = holders()
        if (options.name !== undefined) {
          if (options.name.length === 0) return fail("invalid", "PTY session name must be non-empty")
          if (held.some((holder) => holder.owner === owner && holder.name === options.name)) {
            return fail("name-taken", `PTY session name "${options.name}" already exists for this owner`)
          }
        }
        if (held.filter((holder) => holder.owner === owner).length >= config.maxPerSession) {
          return fail("limit", sessionLimitMessage(config.maxPerSession))
        }
        if (held.length >= config.maxTotal) return fail("limit", layerLimitMessage(config.maxTotal))
        const id = `pty-${++counter}`
        reserved.set(id, { owner, name: options.name })
        return Effect.succeed(id)
      })

    const open = Effect.fn("Terminals.open")(function*(owner: string | undefined, options: Terminals.OpenOptions) {
      const id = yield* reserve(owner, options)
      return yield* Effect.ensuring(opening(id, owner, options), Effect.sync(() => reserved.delete(id)))
    })

    const opening = (id: string, owner: string | undefined, options: Terminals.OpenOptions) =>
      Effect.gen(function*() {
        yield* Effect.annotateCurrentSpan({ "terminal.id": id })
        const base = config.cwd ?? (placed === undefined ? process.cwd() : yield* placed.defaultWorkdir)
        const cwd = options.cwd === undefined ? base : NodePath.resolve(base, options.cwd)
        const inherited = placed?.inheritedEnv ?? process.env
        const env = { ...buildEnv(inherited, options.env, options.dshEnv), ...terminalVariables(config.term, id) }
        const launch = placed === undefined
          ? {}
          : yield* Effect.mapError(placed.launch(owner, cwd), (error) =>
            new TerminalError({ reason: "startup", message: error.message }))
        return yield* Effect.uninterruptibleMask((restore) =>
          Effect.gen(function*() {
            const scope = yield* ScopeModule.fork(layerScope, ExecutionStrategy.sequential)
            // A proxied network's relays live as long as the terminal.
            if (launch.network !== undefined) {
              yield* launch.network.pipe(
                ScopeModule.extend(scope),
                Effect.tapError(() => ScopeModule.close(scope, Exit.void)),
                Effect.mapError((error) => new TerminalError({ reason: "startup", message: error.message }))
              )
            }
            const inbox = yield* PtyInbox.make(config.outputBufferBytes)
            const exited = yield* Deferred.make<void>()
            const pty = yield* (placed?.spawn ?? spawner.spawn)({
              file: shellFile,
              args: shellArgs,
              cwd,
              env,
              rows: options.rows ?? config.rows,
              cols: options.cols ?? config.cols,
              ...(launch.wrapper === undefined ? {} : { wrapper: launch.wrapper }),
              onData: inbox.offerData,
              onExit: inbox.offerExit
            }).pipe(
              ScopeModule.extend(scope),
              Effect.tapError(() => ScopeModule.close(scope, Exit.void)),
              Effect.mapError((error) => new TerminalError({ reason: "startup", message: error.message }))
            )
            inbox.connect(pty.resume)
            const transcript = new Transcript(spills, id, config.maxSpillBytes)
            // Removed once the pump is stopped (finalizers run in reverse).
            yield* ScopeModule.addFinalizer(scope, transcript.close)
            const session = new TerminalSession(
              id,
              options.name,
              options.type,
              owner,
              pty,
              config,
              exited,
              transcript,
              inbox
            )
            const entry: Entry = { session, scope, published: false }
            entries.set(id, entry)
            // Forked fibers inherit the mask: the pump must stay interruptible for the scope to close.
            yield* Effect.forkIn(Effect.interruptible(session.pump()), scope)
            const begun = yield* session.begin({ text: "", submit: false }, true)
            const result = yield* restore(begun.wait).pipe(Effect.onInterrupt(() => closeEntry(entry)))
            if (result.wait === "session_exit" || result.wait === "timeout") {
              yield* closeEntry(entry)
              return yield* fail(
                "startup",
                result.wait === "timeout"
                  ? "PTY shell did not reach readiness before startup timeout"
                  : "PTY shell exited during startup"
              )
            }
            entry.published = true
            const opened: Terminals.Opened = { ...session.snapshot(), startup: result.output }
            return opened
          })
        )
      })

    const claim = (owner: string | undefined, id: string) =>
      Effect.flatMap(lookup(owner, id), (entry) => {
        const refusal = entry.session.refusal()
        if (refusal === undefined) return Effect.succeed(entry.session)
        return fail(entry.session.closing !== undefined ? "closing" : entry.session.active ? "busy" : "exited", refusal)
      })

    const send = Effect.fn("Terminals.send")(function*(owner: string | undefined, id: string, input: Terminals.Input) {
      yield* Effect.annotateCurrentSpan({ "terminal.id": id })
      const session = yield* claim(owner, id)
      return yield* Effect.uninterruptibleMask((restore) =>
        Effect.flatMap(session.begin(input), (begun) =>
          // A cancelled send stops what it started with a real SIGINT, never a written ^C.
          restore(begun.wait).pipe(Effect.onInterrupt(() => session.interrupt())))
      )
    })

    const startSend = Effect.fn("Terminals.startSend")(
      function*(owner: string | undefined, id: string, input: Terminals.Input) {
        yield* Effect.annotateCurrentSpan({ "terminal.id": id })
        const session = yield* claim(owner, id)
        const done = yield* Deferred.make<Terminals.SendResult>()
        const begun = yield* Effect.uninterruptible(
          Effect.tap(
            session.begin(input),
            (begun) =>
              FiberSet.run(
                background,
                Effect.interruptible(Effect.flatMap(begun.wait, (result) => Deferred.succeed(done, result)))
              )
          )
        )
        const operation: Terminals.SendOperation = {
          read: begun.read,
          cancel: session.interrupt(),
          done: Deferred.await(done)
        }
        return operation
      }
    )

    const read = Effect.fn("Terminals.read")(
      function*(owner: string | undefined, id: string, request: Terminals.PageRequest) {
        const entry = yield* lookup(owner, id)
        const offset = request.offset ?? 0
        const lines = request.count ?? 500
        if (!isSafeCount(offset, 0)) return yield* fail("invalid", "PTY read offset must be a non-negative safe integer")
        if (!isSafeCount(lines, 1)) return yield* fail("invalid", "PTY read count must be a positive safe integer")
        return yield* entry.session.page(offset, lines)
      }
    )

    const signal = Effect.fn("Terminals.signal")(
      function*(owner: string | undefined, id: string, signal: Terminals.Signal) {
        const { session } = yield* lookup(owner, id)
        if (session.closing !== undefined) return yield* fail("closing", `PTY session ${id} is closing`)
        if (session.status.kind === "exited") return yield* fail("exited", "PTY session has exited")
        const foreground = yield* session.pty.foreground
        if (foreground === undefined) {
          return yield* fail("exited", `PTY session ${id} has no foreground process group`)
        }
        if (signal === "SIGKILL" && foreground.pgid === session.pty.pid) {
          return yield* fail("invalid", "refusing to SIGKILL the terminal shell; terminate the terminal session instead")
        }
        if (!(yield* session.pty.signalGroup(foreground.pgid, signal))) {
          return yield* fail("exited", `the foreground process group ${foreground.pgid} of PTY session ${id} is gone`)
        }
        return { pgid: foreground.pgid }
      }
    )

    const close = Effect.fn("Terminals.close")(function*(owner: string | undefined, id: string) {
      return yield* closeEntry(yield* lookup(owner, id))
    })

    const list = (owner: string | undefined) =>
      Effect.sync(() =>
        [...entries.values()]
          .filter((entry) => entry.published && entry.session.owner === owner)
          .map((entry) => entry.session.snapshot())
      )

    return Terminals.of({ open, send, startSend, read, signal, close, list })
  })

/**
 * The terminals in the current scope: checks `settings` (a bad value fails with a `ConfigError`
 * naming the field), and closes every terminal when the scope closes. Shells run under the
 * `BashExecutor` in context, if any (with `SandboxSessions`' modes); a confining executor that
 * cannot place a shell fails with a `ConfigError` rather than run one unconfined.
 *
 * @since 0.2.0
 * @category constructors
 */
export const make = (
  settings: Settings.Input = {}
): Effect.Effect<Terminals["Type"], ConfigError.ConfigError, PtySpawner | Scope.Scope> =>
  decodeSettings(Settings, settings).pipe(
    Effect.mapError(({ field, message }) => ConfigError.InvalidData([field], `terminals: ${field} ${message}`)),
    Effect.flatMap(start)
  )

/**
 * The terminals as a layer over a {@link PtySpawner} (production: `NodePtySpawner.layer`); give it the
 * app's `BashExecutor` too, and its shells run as that executor's calls do (see {@link make}).
 *
 * @since 0.2.0
 * @category layers
 */
export const layer = (settings: Settings.Input = {}): Layer.Layer<Terminals, ConfigError.ConfigError, PtySpawner> =>
  Layer.scoped(Terminals, make(settings))
