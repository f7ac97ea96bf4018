/**
 * The terminal tools' handlers over one terminal service, each paired with its tool's definition.
 * The owner of every call is its calling session; a background send is a task of the task runtime.
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import * as NodePath from "node:path"
import * as Option from "effect/Option"
import type { AgentTools } from "../../services/AgentTools.js"
import type { BashEnvRegistry } from "../../services/BashEnvRegistry.js"
import type { Tasks } from "../../services/Tasks.js"
import type { Terminals } from "../../services/Terminals.js"
import * as AgentTool from "../AgentTool.js"
import * as TerminalCloseTool from "../TerminalCloseTool.js"
import * as TerminalListTool from "../TerminalListTool.js"
import * as TerminalOpenTool from "../TerminalOpenTool.js"
import * as TerminalReadTool from "../TerminalReadTool.js"
import * as TerminalSendTool from "../TerminalSendTool.js"
import * as TerminalSignalTool from "../TerminalSignalTool.js"
import { terminalText, truncationLine } from "../terminalShared.js"

/** What the handlers need. */
export interface TerminalToolDeps {
  readonly terminals: Terminals["Type"]
  readonly env: BashEnvRegistry["Type"]
  readonly tasks: Option.Option<Tasks["Type"]>
  readonly enableRunInBackground: boolean
}

const ownerOf = (call: AgentTools.CallContext): string | undefined => call.session?.id

/** A background send's new output for `task_output`, with the marker when older output was dropped. */
const backgroundRead = (read: Terminals.OutputRead): string => {
  const text = terminalText(read.output, read.truncated)
  if (!read.truncated) return text
  return `${text}${text.length === 0 || text.endsWith("\n") ? "" : "\n"}${truncationLine(read.transcriptPath)}`
}

const sendOutcome = (result: Terminals.SendResult, cancelled: boolean): Tasks.Outcome => ({
  status: cancelled ? "killed" : "completed",
  detail: result.status.kind === "running"
    ? `wait: ${result.wait}`
    : `session exited: ${result.status.exitCode ?? result.status.signal ?? "unknown"}`
})

const sendWork = (operation: Terminals.SendOperation): Tasks.Work => {
  let cancelled = false
  return {
    read: Effect.map(operation.read, backgroundRead),
    // `task_kill`: SIGINT to the foreground group; the send settles when the terminal is ready again.
    cancel: Effect.zipRight(Effect.sync(() => cancelled = true), operation.cancel),
    done: Effect.map(operation.done, (result) => sendOutcome(result, cancelled))
  }
}

const taskLabel = (id: string, text: string): string => {
  const line = `${id}: ${text.trim().replace(/\s+/g, " ") || "(input)"}`
  return line.length <= 80 ? line : `${line.slice(0, 79)}…`
}

/** The six tools, by name. */
export const makeTerminalTools = (deps: TerminalToolDeps) => {
  const { env, terminals } = deps
  const background = deps.enableRunInBackground && Option.isSome(deps.tasks)
  return {
    terminal_open: AgentTool.implement(
      TerminalOpenTool.definition,
      Effect.fn("terminal_open.execute")(function*(args: TerminalOpenTool.Parameters, call: AgentTools.CallContext) {
        const dshEnv = yield* env.collect({
          callId: call.callId,
          toolName: "terminal_open",
          ...(call.session !== undefined ? { session: call.session } : {})
        }).pipe(Effect.mapError(AgentTool.failWith))
        // As for `bash`: a relative directory is the session's, and none is the session's own.
        const base = call.session?.cwd
        const cwd = args.cwd === undefined ? base : base === undefined ? args.cwd : NodePath.resolve(base, args.cwd)
        const opened = yield* terminals.open(ownerOf(call), {
          type: args.type,
          ...(args.name !== undefined ? { name: args.name } : {}),
          ...(cwd !== undefined ? { cwd } : {}),
          dshEnv
        }).pipe(Effect.mapError(AgentTool.failWith))
        const value: TerminalOpenTool.Value = {
          sessionId: opened.id,
          ...(opened.name !== undefined ? { name: opened.name } : {}),
          type: opened.type,
          pid: opened.pid,
          status: opened.status,
          motd: TerminalOpenTool.motdOf(opened.startup)
        }
        return value
      })
    ),
    terminal_send: AgentTool.implement(
      TerminalSendTool.definitionFor(background),
      Effect.fn("terminal_send.execute")(function*(args: TerminalSendTool.Parameters, call: AgentTools.CallContext) {
        const owner = ownerOf(call)
        const input = { text: args.text, submit: args.submit ?? true }
        yield* Effect.annotateCurrentSpan({ "terminal.id": args.sessionId })
        if (args.run_in_background === true && Option.isSome(deps.tasks)) {
          const task = yield* deps.tasks.value.start(
            { kind: "terminal", label: taskLabel(args.sessionId, args.text), ...(owner !== undefined ? { owner } : {}) },
            () => Effect.map(terminals.startSend(owner, args.sessionId, input), sendWork)
          ).pipe(Effect.mapError(AgentTool.failWith))
          const started: TerminalSendTool.Value = { kind: "background", taskId: task.id }
          return started
        }
        const result = yield* terminals.send(owner, args.sessionId, input).pipe(Effect.mapError(AgentTool.failWith))
        const value: TerminalSendTool.Value = {
          kind: "foreground",
          viewport: terminalText(result.output, result.truncated),
          waitReason: result.wait,
          sessionStatus: result.status,
          truncated: result.truncated,
          screen: result.screen,
          ...(result.transcriptPath !== undefined ? { transcriptPath: result.transcriptPath } : {})
        }
        return value
      })
    ),
    terminal_read: AgentTool.implement(
      TerminalReadTool.definition,
      Effect.fn("terminal_read.execute")(function*(args: TerminalReadTool.Parameters, call: AgentTools.CallContext) {
        const page = yield* terminals.read(ownerOf(call), args.sessionId, {
          ...(args.offset !== undefined ? { offset: args.offset } : {}),
          ...(args.count !== undefined ? { count: args.count } : {})
        }).pipe(Effect.mapError(AgentTool.failWith))
        const value: TerminalReadTool.Value = { ...page, text: terminalText(page.text, page.truncated) }
        return value
      })
    ),
    terminal_signal: AgentTool.implement(
      TerminalSignalTool.definition,
      Effect.fn("terminal_signal.execute")(
        function*(args: TerminalSignalTool.Parameters, call: AgentTools.CallContext) {
          const { pgid } = yield* terminals.signal(ownerOf(call), args.sessionId, args.signal).pipe(
            Effect.mapError(AgentTool.failWith)
          )
          const value: TerminalSignalTool.Value = { delivered: true, targetPgid: pgid, signal: args.signal }
          return value
        }
      )
    ),
    terminal_close: AgentTool.implement(
      TerminalCloseTool.definition,
      Effect.fn("terminal_close.execute")(function*(args: TerminalCloseTool.Parameters, call: AgentTools.CallContext) {
        const outcome = yield* terminals.close(ownerOf(call), args.sessionId).pipe(Effect.mapError(AgentTool.failWith))
        const value: TerminalCloseTool.Value = { sessionId: args.sessionId, outcome }
        return value
      })
    ),
    terminal_list: AgentTool.implement(
      TerminalListTool.definition,
      Effect.fn("terminal_list.execute")(function*(_args: TerminalListTool.Parameters, call: AgentTools.CallContext) {
        const sessions = yield* terminals.list(ownerOf(call))
        const value: TerminalListTool.Value = sessions.map(({ id, name, pid, status, type }) => ({
          sessionId: id,
          ...(name !== undefined ? { name } : {}),
          type,
          pid,
          status
        }))
        return value
      })
    )
  }
}
