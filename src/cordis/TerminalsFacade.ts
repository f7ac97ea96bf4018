/**
 * `ctx.terminals`: the terminals as the reference harness's terminal service has them
 * (`@deepseek-ai/dsh-terminal`'s `TerminalSessionService`): `spawn`, `startSend` (synchronous, its
 * operation's `done` a Promise), `read`, `signal`, `kill`, `list`, `hasOwnerActivity` and
 * `listBackends`, with the same values and error codes where our service has them. An owner is the
 * session the terminal belongs to: a session id, or what the harness adapter maps to one (the
 * DeepSeek adapter: an agent, by its session, whose directory is then where a terminal starts, as the
 * tools start it). Texts are model text, cleaned as the tools' are.
 */
import * as Effect from "effect/Effect"
import * as NodePath from "node:path"
import type { BashEnvRegistry } from "../services/BashEnvRegistry.js"
import type { TerminalError, Terminals } from "../services/Terminals.js"
import type { ToolSession } from "../services/ToolExecution.js"
import { motdOf } from "../tool/TerminalOpenTool.js"
import { terminalText } from "../tool/terminalShared.js"
import type { CallRunner } from "./CallRunner.js"

/**
 * Why a `ctx.terminals` call was refused: the reference's codes where one fits, ours otherwise.
 *
 * @since 0.2.0
 * @category models
 */
export type CordisTerminalErrorCode =
  | "DUPLICATE_BACKEND"
  | "DUPLICATE_NAME"
  | "FOREIGN_SESSION"
  | "NO_BACKEND"
  | "NO_SESSION"
  | "SEND_ACTIVE"
  | "SERVICE_DISPOSING"
  | "OWNER_UNKNOWN"
  | "CLOSING"
  | "EXITED"
  | "LIMIT"
  | "INVALID"
  | "STARTUP"

/**
 * A refused `ctx.terminals` call; `message` is the text the tools show the model.
 *
 * @since 0.2.0
 * @category models
 */
export class CordisTerminalError extends Error {
  constructor(message: string, readonly code: CordisTerminalErrorCode) {
    super(message)
    this.name = "TerminalError"
  }
}

const codes: Readonly<Record<TerminalError["reason"], CordisTerminalErrorCode>> = {
  unknown: "NO_SESSION",
  foreign: "FOREIGN_SESSION",
  busy: "SEND_ACTIVE",
  closing: "CLOSING",
  exited: "EXITED",
  limit: "LIMIT",
  invalid: "INVALID",
  "no-backend": "NO_BACKEND",
  "name-taken": "DUPLICATE_NAME",
  unavailable: "SERVICE_DISPOSING",
  startup: "STARTUP"
}

/** What an aborted `spawn`'s run answers (it then rejects with the signal's reason). */
const aborted: unique symbol = Symbol("aborted")

const refusal = (error: TerminalError) => new CordisTerminalError(error.message, codes[error.reason])

/**
 * A terminal as listed.
 *
 * @since 0.2.0
 * @category models
 */
export interface CordisTerminalSnapshot {
  readonly sessionId: string
  readonly name?: string
  readonly type: string
  readonly pid?: number
  readonly status: Terminals.Status
}

/**
 * A settled send: `viewport` is its output as model text; `transcriptPath` names the terminal's whole
 * transcript when the output was cut and it is on disk.
 *
 * @since 0.2.0
 * @category models
 */
export interface CordisTerminalSendResult {
  readonly viewport: string
  readonly waitReason: Terminals.WaitReason
  readonly sessionStatus: Terminals.Status
  readonly truncated: boolean
  readonly transcriptPath?: string
}

/**
 * A send under way.
 *
 * @since 0.2.0
 * @category models
 */
export interface CordisTerminalSendOperation {
  /** Resolves once the terminal is ready again, the timeout, or the shell's exit. */
  readonly done: Promise<CordisTerminalSendResult>
  /** The output since the previous read, as model text. */
  readOutput(): { readonly delta: string; readonly truncated: boolean }
  /** SIGINT to the foreground group; false once the send has settled. */
  cancel(): boolean
}

/**
 * A page of the scrollback, as model text.
 *
 * @since 0.2.0
 * @category models
 */
export type CordisTerminalReadResult = Terminals.Page

/**
 * The `ctx.terminals` service.
 *
 * @since 0.2.0
 * @category models
 */
export interface CordisTerminals {
  /** Our terminals have one backend, `shell`: registering another is refused (`DUPLICATE_BACKEND` for `shell`). */
  registerBackend(backend: { readonly type: string }): () => void
  listBackends(): Array<string>
  /** Opens a terminal and waits for its first prompt; `signal` aborts the open (rejecting with its reason). */
  spawn(
    owner: unknown,
    request: { readonly type: string; readonly name?: string; readonly cwd?: string },
    signal?: AbortSignal
  ): Promise<CordisTerminalSnapshot & { readonly motd: string }>
  /** An open terminal, or one opening, of the owner. */
  hasOwnerActivity(owner: unknown): boolean
  /** Writes and returns at once; `request.signal` cancels the send (SIGINT to the foreground group). */
  startSend(
    owner: unknown,
    id: string,
    request: { readonly text: string; readonly submit?: boolean; readonly signal?: AbortSignal }
  ): CordisTerminalSendOperation
  read(owner: unknown, id: string, request?: { readonly offset?: number; readonly count?: number }): CordisTerminalReadResult
  signal(owner: unknown, id: string, signal: Terminals.Signal): Promise<{ readonly delivered: true; readonly targetPgid: number }>
  /** Closes the terminal once every process of it is gone: true, or false when a close is already under way. */
  kill(owner: unknown, id: string, reason?: string): Promise<boolean>
  list(owner: unknown): Array<CordisTerminalSnapshot>
}

const snapshotOf = (terminal: Terminals.Snapshot): CordisTerminalSnapshot => ({
  sessionId: terminal.id,
  ...(terminal.name !== undefined ? { name: terminal.name } : {}),
  type: terminal.type,
  pid: terminal.pid,
  status: terminal.status
})

const withTranscript = <A extends object>(value: A, path: string | undefined): A =>
  path === undefined ? value : { ...value, transcriptPath: path }

const sendResultOf = (result: Terminals.SendResult): CordisTerminalSendResult =>
  withTranscript({
    viewport: terminalText(result.output, result.truncated),
    waitReason: result.wait,
    sessionStatus: result.status,
    truncated: result.truncated
  }, result.transcriptPath)

/**
 * The `ctx.terminals` facade over one terminal service. `ownerOf` maps a caller's owner to its
 * session (undefined: not one the plugin can place).
 */
export const makeTerminalsFacade = (
  terminals: Terminals["Type"],
  registry: BashEnvRegistry["Type"],
  runner: CallRunner<never>,
  ownerOf: (owner: unknown) => ToolSession | undefined
): CordisTerminals => {
  const opening = new Map<string, number>()
  let spawns = 0
  const toolSessionOf = (owner: unknown): ToolSession => {
    const session = ownerOf(owner)
    if (session === undefined) {
      throw new CordisTerminalError("effect-bash: a terminal owner must be a session id or an agent with a session", "OWNER_UNKNOWN")
    }
    return session
  }
  const sessionOf = (owner: unknown): string => toolSessionOf(owner).id
  // Runs a synchronous call, throwing a refusal as the reference's error.
  const sync = <A>(effect: Effect.Effect<A, TerminalError>): A => runner.runSync(Effect.mapError(effect, refusal))
  const run = <A>(effect: Effect.Effect<A, TerminalError>): Promise<A> => runner.run(Effect.mapError(effect, refusal))

  return {
    registerBackend: (backend) => {
      throw new CordisTerminalError(
        backend.type === "shell"
          ? `PTY backend "shell" is already registered`
          : `effect-bash terminals have one backend, shell; "${backend.type}" cannot be registered`,
        backend.type === "shell" ? "DUPLICATE_BACKEND" : "INVALID"
      )
    },
    listBackends: () => ["shell"],
    spawn: async (owner, request, signal) => {
      const toolSession = toolSessionOf(owner)
      const session = toolSession.id
      // As for the tools: a relative directory is the session's, and none is the session's own.
      const base = toolSession.cwd
      const cwd = request.cwd === undefined ? base : base === undefined ? request.cwd : NodePath.resolve(base, request.cwd)
      signal?.throwIfAborted()
      opening.set(session, (opening.get(session) ?? 0) + 1)
      try {
        const open = Effect.flatMap(
          registry.collect({ callId: `terminals-spawn-${++spawns}`, toolName: "terminal_open", session: toolSession }),
          (dshEnv) =>
            Effect.mapError(
              terminals.open(session, {
                type: request.type,
                ...(request.name !== undefined ? { name: request.name } : {}),
                ...(cwd !== undefined ? { cwd } : {}),
                dshEnv
              }),
              refusal
            )
        )
        const opened = signal === undefined
          ? await runner.run(open)
          : await runner.runUntil<Terminals.Opened | typeof aborted, unknown>(open, signal, aborted)
        if (opened === aborted) throw signal!.reason
        return { ...snapshotOf(opened), motd: motdOf(opened.startup) }
      } finally {
        const left = opening.get(session)! - 1
        if (left === 0) opening.delete(session)
        else opening.set(session, left)
      }
    },
    hasOwnerActivity: (owner) => {
      const session = sessionOf(owner)
      return opening.has(session) || runner.readSync(terminals.list(session)).length > 0
    },
    startSend: (owner, id, request) => {
      const operation = sync(
        terminals.startSend(sessionOf(owner), id, { text: request.text, submit: request.submit ?? true })
      )
      let settled = false
      const done = runner.watch(operation.done).then((result) => {
        settled = true
        return sendResultOf(result)
      })
      const cancel = () => {
        if (settled) return false
        void runner.run(operation.cancel).catch(() => undefined)
        return true
      }
      request.signal?.addEventListener("abort", cancel, { once: true })
      void done.finally(() => request.signal?.removeEventListener("abort", cancel)).catch(() => undefined)
      return {
        done,
        readOutput: () => {
          const read = runner.readSync(operation.read)
          return { delta: terminalText(read.output, read.truncated), truncated: read.truncated }
        },
        cancel
      }
    },
    read: (owner, id, request = {}) => {
      const page = sync(terminals.read(sessionOf(owner), id, request))
      return withTranscript({
        text: terminalText(page.text, page.truncated),
        totalLines: page.totalLines,
        lineBegin: page.lineBegin,
        lineEnd: page.lineEnd,
        truncated: page.truncated
      }, page.transcriptPath)
    },
    signal: async (owner, id, signal) => {
      const { pgid } = await run(terminals.signal(sessionOf(owner), id, signal))
      return { delivered: true, targetPgid: pgid }
    },
    kill: async (owner, id) => (await run(terminals.close(sessionOf(owner), id))) === "closed",
    list: (owner) => runner.runSync(terminals.list(sessionOf(owner))).map(snapshotOf)
  }
}
