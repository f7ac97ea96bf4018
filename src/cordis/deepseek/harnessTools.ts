/**
 * Our host-neutral tool descriptors as harness tool definitions (`ctx.tools.register`).
 */
import type { AgentTools } from "../../services/AgentTools.js"
import { ToolError } from "../../services/AgentTools.js"
import { toHarnessParameters } from "./harnessParameters.js"
import type { HarnessCalls } from "./HarnessCalls.js"
import { sessionOf } from "./HarnessCalls.js"
import type { HarnessTextBlock, HarnessToolDefinition, HarnessView } from "./harness.js"

/**
 * Runs one of our tools (`AgentTools.callUnknown`) until `signal` fires, which aborts it: resolves with its
 * result — value and rendered text, or the error with its exact contract text (`command aborted` for
 * an aborted call).
 */
export type InvokeTool = (
  name: string,
  args: unknown,
  call: AgentTools.CallContext,
  signal: AbortSignal
) => Promise<AgentTools.Result>

const text = (value: string): HarnessTextBlock => ({ type: "text", text: value })

/** The registry accepts only lossless JSON (no `undefined` members); our values are plain data. */
const toJson = (value: unknown): unknown => (value === undefined ? null : JSON.parse(JSON.stringify(value)))

/** The canonical value; an error result throws a `ToolError` whose message is the exact contract text. */
const valueOf = (result: AgentTools.Result): unknown => {
  if (result.isError) throw new ToolError({ message: result.message })
  return toJson(result.value)
}

/** Presenters must never throw: a replay may hand them arguments from an older schema. */
const safely = <A>(present: () => A): A | undefined => {
  try {
    return present()
  } catch {
    return undefined
  }
}

const callView = (view: AgentTools.Presentation): HarnessView =>
  view.kind === "terminal"
    ? toJson({ card: "terminal", title: view.title, description: view.description, cwd: view.cwd }) as HarnessView
    : toJson({
      card: "generic",
      title: view.title,
      kind: "execute",
      content: [view.description, view.detail].filter((line) => line !== undefined).map(text)
    }) as HarnessView

const resultView = (view: AgentTools.Presentation): HarnessView =>
  view.kind === "terminal"
    ? toJson({
      card: "terminal",
      title: view.title,
      output: view.output,
      exitCode: typeof view.exitCode === "number" ? view.exitCode : undefined,
      signal: typeof view.signal === "string" ? view.signal : undefined
    }) as HarnessView
    : toJson({
      card: "generic",
      title: view.title,
      content: [view.description, view.detail].filter((line) => line !== undefined).map(text)
    }) as HarnessView

const isPresentation = (meta: unknown): meta is AgentTools.Presentation =>
  typeof meta === "object" && meta !== null && ((meta as { kind?: unknown }).kind === "terminal" ||
    (meta as { kind?: unknown }).kind === "execute")

/**
 * The harness definition of one tool. The registry does not validate a raw definition's arguments, so
 * every call reaches our handler, which validates and answers with our exact messages. The result
 * card is presented from the structured result (carried as presentation metadata), never from text.
 */
export const toHarnessTool = (
  descriptor: AgentTools.Descriptor,
  invoke: InvokeTool,
  calls: HarnessCalls
): HarnessToolDefinition => {
  // A live call's result was rendered by the call itself: the registry, which renders the value it
  // snapshots right after `execute` with the same arguments object, takes that text instead of
  // rendering again. Replays (and a value a hook replaced) are rendered from the value.
  const rendered = new WeakMap<object, string>()
  const takeRendered = (args: unknown): string | undefined => {
    if (typeof args !== "object" || args === null) return undefined
    const text = rendered.get(args)
    rendered.delete(args)
    return text
  }
  return {
    name: descriptor.name,
    description: descriptor.description,
    parameters: toHarnessParameters(descriptor.parameters),
    output: {
      schema: { description: `The canonical result of ${descriptor.name}.` },
      render: (args, value) => [text(takeRendered(args) ?? descriptor.render(value))],
      presentationMeta: (args, value) => toJson(safely(() => descriptor.presentResult(args, value)))
    },
    execute: (args, exec) => {
      const session = sessionOf(exec.agent)
      const call: AgentTools.CallContext = { callId: exec.callId, ...(session === undefined ? {} : { session }) }
      return calls.during(exec.callId, exec.agent, () => invoke(descriptor.name, args, call, exec.signal)).then(
        (result) => {
          if (!result.isError && typeof args === "object" && args !== null) rendered.set(args, result.text)
          return valueOf(result)
        }
      )
    },
    presentCall: (args) => {
      const view = safely(() => descriptor.presentCall(args))
      return view === undefined ? undefined : callView(view)
    },
    presentResult: (_args, result) =>
      !result.isError && isPresentation(result.meta) ? resultView(result.meta) : undefined
  }
}
