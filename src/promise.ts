/**
 * effect-bash/promise: the same tools and stack (`BashStack`) behind a Promise API, for apps that are
 * not on Effect 3 (an Effect 4 app wraps its calls in `Effect.tryPromise`; a plain Node app awaits
 * them). The published file is a bundle (`dist/bin/promise.mjs`, made by the build) that carries
 * its own Effect 3, as the command does: it needs nothing from the app's `node_modules` but the
 * optional `docker-modem` for `containerImage`. Its types are plain TypeScript: they name no Effect
 * type, so they check against any Effect, or none.
 *
 * @since 0.2.0
 */
import * as Effect from "effect/Effect"
import * as ManagedRuntime from "effect/ManagedRuntime"
import * as BashStack from "./BashStack.js"
import { AgentTools } from "./services/AgentTools.js"

/**
 * How {@link createEffectBash} composes the stack.
 *
 * @since 0.2.0
 * @category models
 */
export interface EffectBashOptions {
  /** The directory commands run in, unless a call names another (default: `process.cwd()`). */
  readonly cwd?: string
  /** The session the calls belong to (default `"promise"`): its background tasks are the ones listed. */
  readonly session?: string
  /** Confine commands with bubblewrap (`docs/sandbox.md`). */
  readonly sandboxMode?: "read-only" | "workspace-write"
  /** Run commands in a container from this image (`docs/container.md`; needs `docker-modem@5` installed). */
  readonly containerImage?: string
  /** Offer `run_in_background` on the `bash` tool (default true). */
  readonly background?: boolean
}

/**
 * What a tool call gives back: the text the model reads, and the tool's value (as `effect-bash`'s
 * `AgentTools.Result`; the value's shape is the tool's Schema, see the README's "What the model
 * reads") or the error's message.
 *
 * @since 0.2.0
 * @category models
 */
export type ToolResult =
  | { readonly isError: false; readonly text: string; readonly value: unknown }
  | { readonly isError: true; readonly text: string; readonly message: string }

/**
 * A published tool: its name, description and the JSON Schema of its parameters.
 *
 * @since 0.2.0
 * @category models
 */
export interface ToolDescriptor {
  readonly name: string
  readonly description: string
  readonly parameters: { readonly type: "object"; readonly [key: string]: unknown }
}

/**
 * Options of one call: an `AbortSignal` aborts it (a foreground command is killed; the Promise then
 * rejects).
 *
 * @since 0.2.0
 * @category models
 */
export interface CallOptions {
  readonly signal?: AbortSignal
}

/**
 * Where and as what a command runs: `workdir` (default: the session's `cwd`) and the `description` the
 * `bash` tool records (default: the command).
 *
 * @since 0.2.0
 * @category models
 */
export interface CommandOptions {
  readonly workdir?: string
  readonly description?: string
}

/**
 * The tools over one running stack. Every method rejects once {@link EffectBash.close} has begun.
 *
 * @since 0.2.0
 * @category models
 */
export interface EffectBash {
  /** `bash`, `task_output`, `task_list` and `task_kill`, as a model is shown them. */
  readonly tools: ReadonlyArray<ToolDescriptor>
  /** Calls a tool by name with the model's arguments; a bad argument is a result with `isError`. */
  readonly callTool: (name: string, args: unknown, options?: CallOptions) => Promise<ToolResult>
  /** Runs `command` in the foreground (`bash`); `timeoutMs`, `workdir` and `description` as the tool takes them. */
  readonly run: (command: string, options?: CallOptions & CommandOptions & { readonly timeoutMs?: number }) => Promise<ToolResult>
  /** Starts `command` as a background task and returns its id; rejects with the tool's text if it does not start. */
  readonly start: (command: string, options?: CommandOptions) => Promise<{ readonly taskId: string; readonly text: string }>
  /** What a background task printed since the last read, and its status (`task_output`). */
  readonly output: (
    taskId: string,
    options?: CallOptions & { readonly wait?: boolean; readonly timeoutMs?: number }
  ) => Promise<ToolResult>
  /** Kills a background task (`task_kill`). */
  readonly kill: (taskId: string) => Promise<ToolResult>
  /** Kills every process the stack started, foreground and background, and awaits their exit. */
  readonly close: () => Promise<void>
}

/** The `bash` tool's arguments for `command`. */
const bashArguments = (command: string, { description, workdir }: CommandOptions) => ({
  command,
  description: description ?? command,
  ...(workdir === undefined ? {} : { workdir })
})

/** The bash tool's value when it started a background task. */
const startedTask = (value: unknown): string | undefined =>
  typeof value === "object" && value !== null && (value as { kind?: unknown }).kind === "background"
    ? String((value as { taskId: unknown }).taskId)
    : undefined

/**
 * Composes the stack and resolves once it is ready; rejects with the reason when it cannot be
 * composed (a sandbox that cannot start, an image that is not there, `docker-modem` missing).
 *
 * @since 0.2.0
 * @category constructors
 */
export const createEffectBash = async (options: EffectBashOptions = {}): Promise<EffectBash> => {
  const runtime = ManagedRuntime.make(BashStack.layer({
    ...(options.sandboxMode === undefined ? {} : { sandbox: { sandboxMode: options.sandboxMode } }),
    ...(options.containerImage === undefined ? {} : { container: { image: options.containerImage } }),
    enableRunInBackground: options.background ?? true
  }))
  const agentTools = await runtime.runPromise(AgentTools).catch(async (error: unknown) => {
    await runtime.dispose()
    throw error
  })
  const session = { id: options.session ?? "promise", cwd: options.cwd ?? process.cwd() }
  let calls = 0
  let closed: Promise<void> | undefined
  const callTool = (name: string, args: unknown, call: CallOptions = {}): Promise<ToolResult> =>
    closed === undefined
      ? runtime.runPromise(
        Effect.map(agentTools.callUnknown(name, args, { callId: `promise-${++calls}`, session }), (result): ToolResult =>
          result.isError
            ? { isError: true, text: result.text, message: result.message }
            : { isError: false, text: result.text, value: result.value }),
        call.signal === undefined ? {} : { signal: call.signal }
      )
      : Promise.reject(new Error("effect-bash: closed"))
  return {
    tools: agentTools.tools.map(({ description, name, parameters }) => ({ name, description, parameters })),
    callTool,
    run: (command, options = {}) =>
      callTool("bash", {
        ...bashArguments(command, options),
        ...(options.timeoutMs === undefined ? {} : { timeoutMs: options.timeoutMs })
      }, options),
    start: async (command, options = {}) => {
      const result = await callTool("bash", { ...bashArguments(command, options), run_in_background: true })
      const taskId = result.isError ? undefined : startedTask(result.value)
      if (taskId === undefined) throw new Error(`effect-bash: the task did not start: ${result.text}`)
      return { taskId, text: result.text }
    },
    output: (taskId, { timeoutMs, wait, ...call } = {}) =>
      callTool("task_output", {
        task_id: taskId,
        ...(wait === undefined ? {} : { wait }),
        ...(timeoutMs === undefined ? {} : { timeout_ms: timeoutMs })
      }, call),
    kill: (taskId) => callTool("task_kill", { task_id: taskId }),
    close: () => (closed ??= runtime.dispose())
  }
}
