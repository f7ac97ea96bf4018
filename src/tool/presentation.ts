/**
 * UI cards for calls and results (CONTRACT §2 presentation). Pure functions of the stored arguments
 * and structured value, so a replay shows the same card; the exit status comes from the value, never
 * from parsing the text.
 *
 * @since 0.1.0
 */
import { mergeStreams } from "../services/mergeStreams.js"
import type { ToolPresentation } from "../services/AgentTools.js"
import { isBashToolValue } from "./BashToolValue.js"

const field = (args: unknown, key: string): unknown =>
  typeof args === "object" && args !== null ? (args as Readonly<Record<string, unknown>>)[key] : undefined

const stringField = (args: unknown, key: string): string | undefined => {
  const value = field(args, key)
  return typeof value === "string" ? value : undefined
}

const optional = <K extends string>(key: K, value: string | undefined): { readonly [P in K]?: string } =>
  (value === undefined ? {} : { [key]: value }) as { readonly [P in K]?: string }

/**
 * A `bash` call: a terminal card, or an execute card for a background start.
 *
 * @since 0.1.0
 */
export const presentBashCall = (args: unknown): ToolPresentation => {
  const title = stringField(args, "command") ?? "bash"
  const description = stringField(args, "description")
  if (field(args, "run_in_background") === true) {
    return { kind: "execute", title, ...optional("description", description) }
  }
  return { kind: "terminal", title, ...optional("description", description), ...optional("cwd", stringField(args, "workdir")) }
}

/**
 * A `bash` result: the terminal card with the raw output and the exit status of the stored value, or
 * an execute card naming the started task.
 *
 * @since 0.1.0
 */
export const presentBashResult = (args: unknown, value: unknown): ToolPresentation => {
  const call = presentBashCall(args)
  if (!isBashToolValue(value)) return call
  if (value.kind === "background") {
    return { kind: "execute", title: call.title, ...optional("description", call.description), detail: `task ${value.taskId}` }
  }
  return {
    kind: "terminal",
    title: call.title,
    ...optional("description", call.description),
    ...optional("cwd", stringField(args, "workdir")),
    output: mergeStreams(value.stdout.text, value.stderr.text),
    exitCode: value.exitCode,
    signal: value.signal,
    timedOut: value.timedOut
  }
}

const taskTitles = {
  task_output: (id: string) => `Read output of task ${id}`,
  task_list: () => "List background tasks",
  task_kill: (id: string) => `Stop task ${id}`
} as const

/**
 * A task tool call: an execute card.
 *
 * @since 0.1.0
 */
export const presentTaskCall = (tool: keyof typeof taskTitles, args: unknown): ToolPresentation => ({
  kind: "execute",
  title: taskTitles[tool](stringField(args, "task_id") ?? "?")
})

/**
 * A task tool result: the call's card with the rendered text as its detail.
 *
 * @since 0.1.0
 */
export const presentTaskResult = (tool: keyof typeof taskTitles, args: unknown, text: string): ToolPresentation => ({
  kind: "execute",
  title: taskTitles[tool](stringField(args, "task_id") ?? "?"),
  detail: text
})
