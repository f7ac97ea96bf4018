/**
 * The reference harness's terminal tools, loaded from the directory they were installed into
 * (`EFFECT_BASH_DSH_TERMINAL_DIR`, see docs/testing.md): `@deepseek-ai/dsh-tool-terminal` peers on a
 * harness line our lock file does not pin, so the reference's packages — its own `cordis` too — come
 * from there, never from this checkout's `node_modules`.
 */
import { existsSync } from "node:fs"
import { join } from "node:path"
import { pathToFileURL } from "node:url"
import { supplyPromiseWithResolvers } from "../../bench/lib/withResolvers.js"

/** One tool call's outcome as a model is handed it: the error flag, the text, the value. */
export interface Outcome {
  readonly isError: boolean
  readonly text: string
  readonly value: unknown
}

/** A Cordis context with the terminal tools registered, and calls into its registry. */
export interface ToolHarness {
  /** `ctx.tools.execute` for the agent of session `session`. */
  readonly execute: (name: string, args: unknown, session: string) => Promise<Outcome>
  /** The registered `terminal_*` tools' schemas, as the model is sent them. */
  readonly schemas: () => ReadonlyArray<{ readonly name: string; readonly description: string; readonly parameters: unknown }>
  /** The assembled system prompt's sections. */
  readonly sections: () => Promise<ReadonlyArray<{ readonly name: string; readonly text?: string }>>
  readonly dispose: () => Promise<void>
}

const packages = [
  "cordis",
  "dsh-system-prompt",
  "dsh-tools",
  "dsh-subprocess-local",
  "dsh-sandbox-policy",
  "dsh-terminal",
  "dsh-terminal-bash",
  "dsh-tool-terminal"
] as const

const entryOf = (dir: string, name: string) => join(dir, "node_modules", "@deepseek-ai", name, "lib", "index.js")

/**
 * The directory named by `EFFECT_BASH_DSH_TERMINAL_DIR`; without it the differential tests skip, and
 * say why once. A directory that lacks a reference package fails them instead (`.ci/run` installs them).
 */
export const referenceTerminalDir: string | undefined = process.env["EFFECT_BASH_DSH_TERMINAL_DIR"] || undefined
if (referenceTerminalDir === undefined) {
  console.warn(
    "terminal differential tests skipped: EFFECT_BASH_DSH_TERMINAL_DIR is not set (the directory the reference's terminal packages were installed into; .ci/run makes it, docs/testing.md says how)"
  )
}

interface ReferenceContext {
  plugin(plugin: unknown, config?: unknown): Promise<unknown>
  provide(name: string, value: unknown): unknown
  readonly tools: {
    execute(call: unknown): Promise<
      { readonly isError: boolean; readonly value?: unknown; readonly content: ReadonlyArray<{ type: string; text?: string }> }
    >
    schemas(): ReadonlyArray<{ readonly name: string; readonly description: string; readonly parameters: unknown }>
  }
  readonly systemPrompt: { assemble(): Promise<{ readonly sections: ReadonlyArray<{ name: string; text?: string }> }> }
  readonly fiber: { dispose(): Promise<unknown> }
}

/**
 * The reference composition as the harness makes it: `SystemPrompt` and `ToolRuntime`, the local
 * subprocess provider, the sandbox policy in `danger-full-access` (the shell starts unconfined, as
 * ours does under the local executor) rooted at `cwd`, the terminal registry, the bash backend, and
 * the six tools with their defaults. Each session id (`s1`, `s2`, …) is one registered agent whose
 * session works in `cwd`, created on its first call.
 */
export const loadReferenceTerminals = async (dir: string, cwd: string): Promise<ToolHarness> => {
  const missing = packages.filter((name) => !existsSync(entryOf(dir, name)))
  if (missing.length > 0) {
    throw new Error(`EFFECT_BASH_DSH_TERMINAL_DIR=${dir} lacks ${missing.map((name) => `@deepseek-ai/${name}`).join(", ")}`)
  }
  // The reference's packages await `Promise.withResolvers` (Node 22); on Node 20 it is supplied.
  supplyPromiseWithResolvers()
  const load = async (name: (typeof packages)[number]) =>
    (await import(pathToFileURL(entryOf(dir, name)).href)) as Record<string, unknown>
  const { Context } = (await load("cordis")) as { Context: new() => ReferenceContext }
  const root = new Context()
  await root.plugin((await load("dsh-system-prompt")).SystemPrompt)
  await root.plugin((await load("dsh-tools")).default)
  await root.plugin((await load("dsh-subprocess-local")).LocalSubprocessRuntime)
  await root.plugin((await load("dsh-sandbox-policy")).default, { mode: "danger-full-access", workspaceRoot: cwd })
  await root.plugin((await load("dsh-terminal")).default)
  // Close's grace as ours has it in the tests (`closeGraceMs: 1_000`): an interactive bash ignores
  // SIGTERM, so each close waits it out.
  await root.plugin(await load("dsh-terminal-bash"), { disposeGraceMs: 1_000 })
  await root.plugin(await load("dsh-tool-terminal"))
  const agents = new Map<string, object>()
  root.provide("agents", agents)
  const agentOf = (session: string) => {
    const id = `agent-${session}`
    const known = agents.get(id)
    if (known !== undefined) return known
    const agent = { id, ctx: root, session: { id: session, header: { id: session, cwd }, events: [] } }
    agents.set(id, agent)
    return agent
  }
  let calls = 0
  return {
    execute: async (name, args, session) => {
      const result = await root.tools.execute({
        callId: `call-${++calls}`,
        name,
        arguments: args,
        signal: new AbortController().signal,
        agent: agentOf(session)
      })
      const [block] = result.content
      return { isError: result.isError, text: block?.type === "text" ? block.text ?? "" : "", value: result.isError ? undefined : result.value }
    },
    schemas: () => root.tools.schemas().filter((schema) => schema.name.startsWith("terminal_")),
    sections: async () => (await root.systemPrompt.assemble()).sections,
    dispose: async () => {
      await root.fiber.dispose()
    }
  }
}
