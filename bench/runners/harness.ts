/**
 * The reference and our `bash` tool inside a real harness registry: `@deepseek-ai/cordis` 4.0.4 with
 * `SystemPrompt` and `ToolRuntime` (`@deepseek-ai/dsh-tools`), calls through `ctx.tools.execute` — the
 * path a model's call takes. The reference composition is the harness's own: `LocalSubprocessRuntime`
 * (`dsh-subprocess-local`, `ctx.subprocess`), `LocalBashExecutor` (`dsh-bash-local`, `ctx.shell`),
 * `dsh-shell-env` (`ctx.shellEnv`) and `dsh-tool-bash`; ours is the effect-bash Cordis plugin alone.
 *
 * `dsh-subprocess-local` (the reference executor's process layer) is loaded by name, or from the module
 * file named by `BENCH_DSH_SUBPROCESS_LOCAL` when it is installed outside this project; without it the
 * reference contenders are left out and the bench says so.
 */
import { Context } from "@deepseek-ai/cordis"
import LocalBashExecutor from "@deepseek-ai/dsh-bash-local"
import * as ShellEnv from "@deepseek-ai/dsh-shell-env"
import { SystemPrompt } from "@deepseek-ai/dsh-system-prompt"
import * as ToolBash from "@deepseek-ai/dsh-tool-bash"
import ToolRuntime from "@deepseek-ai/dsh-tools"
import { isAbsolute } from "node:path"
import { pathToFileURL } from "node:url"
import EffectBash from "../../src/cordis-adapter.js"
import type { Runner } from "./Runner.js"
import { supplyPromiseWithResolvers } from "../lib/withResolvers.js"

/** What the bench reads of a harness call's result. */
interface ToolResult {
  readonly isError: boolean
  readonly content: ReadonlyArray<{ readonly type: string; readonly text?: string }>
}

/** The parts of a harness context the bench calls; typed structurally (the packages' own augmentations vary). */
interface Harness {
  readonly plugin: (plugin: unknown, config?: unknown) => Promise<unknown> & { readonly dispose: () => Promise<unknown> }
  readonly tools: { readonly execute: (call: Record<string, unknown>) => Promise<ToolResult> }
}

interface ShellSeam {
  readonly resolve: (request: { readonly command: string }) => unknown
  readonly run: (spec: unknown) => Promise<{
    readonly exitCode: number | null
    readonly stdout: { readonly truncated: boolean; readonly spillPath?: string }
  }>
}

supplyPromiseWithResolvers()

/** The reference subprocess layer, or `undefined` (with the reason) when it is not installed. */
const loadSubprocessRuntime = async (): Promise<{ readonly runtime?: unknown; readonly missing?: string }> => {
  const configured = process.env["BENCH_DSH_SUBPROCESS_LOCAL"]
  const specifier = configured === undefined
    ? "@deepseek-ai/dsh-subprocess-local"
    : isAbsolute(configured) ? pathToFileURL(configured).href : configured
  try {
    const module = (await import(specifier)) as { readonly LocalSubprocessRuntime: unknown }
    return { runtime: module.LocalSubprocessRuntime }
  } catch (error) {
    return { missing: `${specifier}: ${error instanceof Error ? error.message.split("\n")[0] : String(error)}` }
  }
}

let calls = 0

/** One `bash` tool call through the registry, as a session's agent makes it; fails on an error result. */
const toolCall = (harness: Harness, agent: object) => async (command: string): Promise<void> => {
  const result = await harness.tools.execute({
    callId: `bench-${++calls}`,
    name: "bash",
    arguments: { command, description: "benchmark call" },
    signal: new AbortController().signal,
    agent
  })
  if (result.isError) throw new Error(`bash tool call failed: ${result.content[0]?.text ?? "(no text)"}`)
}

const agentIn = (cwd: string) => ({ session: { header: { id: "bench-session", cwd } } })

interface Registry {
  readonly harness: Harness
  /** Loads a plugin into the harness and waits until it is ready. */
  readonly load: (plugin: unknown, config?: unknown) => Promise<void>
  /** Unloads every plugin, the last loaded first. */
  readonly close: () => Promise<void>
}

/** A registry: the harness context with `SystemPrompt` and `ToolRuntime` loaded. */
const makeRegistry = async (): Promise<Registry> => {
  const root = new Context()
  const harness = root as unknown as Harness
  const fibers: Array<{ readonly dispose: () => Promise<unknown> }> = []
  const load = async (plugin: unknown, config?: unknown) => {
    const fiber = harness.plugin(plugin, config)
    fibers.push(fiber)
    await fiber
  }
  await load(SystemPrompt)
  await load(ToolRuntime)
  return {
    harness,
    load,
    close: async () => {
      for (const fiber of fibers.reverse()) await fiber.dispose()
    }
  }
}

/** The reference contenders: its executor (`ctx.shell`) and its `bash` tool, in one harness. */
export interface ReferenceRunners {
  readonly executor: Runner
  readonly tool: Runner
}

/**
 * Loads the reference composition; `undefined` (reason logged) when `dsh-subprocess-local` is missing.
 * `maxSpillBytes` is the executor's spill cap, as for ours, so a large output reaches its file.
 */
export const makeReferenceRunners = async (
  config: { readonly maxSpillBytes?: number },
  log: (line: string) => void
): Promise<ReferenceRunners | undefined> => {
  const { runtime, missing } = await loadSubprocessRuntime()
  if (runtime === undefined) {
    log(`reference contenders left out: @deepseek-ai/dsh-subprocess-local is not installed (${missing})`)
    return undefined
  }
  const { harness, load, close } = await makeRegistry()
  await load(runtime)
  await load(LocalBashExecutor, config)
  await load(ShellEnv)
  await load(ToolBash)
  const shell = (harness as unknown as { readonly shell: ShellSeam }).shell
  let closed: Promise<void> | undefined
  const closeOnce = () => (closed ??= close())
  return {
    executor: {
      id: "reference",
      label: "reference executor (dsh-bash-local)",
      level: "executor",
      run: async (command) => {
        await shell.run(shell.resolve({ command }))
      },
      runToFile: async (command) => {
        const result = await shell.run(shell.resolve({ command }))
        if (result.stdout.spillPath === undefined) {
          throw new Error(`no spill file reported (truncated: ${result.stdout.truncated}, exit ${result.exitCode})`)
        }
        return { path: result.stdout.spillPath }
      },
      close: closeOnce
    },
    tool: {
      id: "reference-tool",
      label: "reference `bash` tool (dsh-tool-bash)",
      level: "tool",
      run: toolCall(harness, agentIn(process.cwd())),
      close: closeOnce
    }
  }
}

/** Our `bash` tool: the effect-bash Cordis plugin in the same kind of registry. */
export const makeOursToolRunner = async (): Promise<Runner> => {
  const { harness, load, close } = await makeRegistry()
  const run = toolCall(harness, agentIn(process.cwd()))
  await load(EffectBash)
  return {
    id: "ours-tool",
    label: "effect-bash `bash` tool",
    level: "tool",
    run,
    close
  }
}
