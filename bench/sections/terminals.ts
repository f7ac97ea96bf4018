/**
 * Work item (n): terminals. The round trip of `echo hi` on an open terminal — the send written, the
 * terminal ready again, the result in hand — and the cost of opening one (until its first prompt)
 * and closing it (until every process of it is gone): ours (`TerminalsLive` over `NodePtySpawner`)
 * against the reference's (`@deepseek-ai/dsh-terminal` with its `dsh-terminal-bash` backend over
 * `dsh-subprocess-local`), each with its own defaults, taking turns in blocks.
 *
 * The reference's terminal packages are not dependencies of this project (they peer on harness
 * packages our pins do not match): they are loaded from a directory they were installed into,
 * `BENCH_DSH_TERMINAL_DIR` (see bench/README.md); without it the reference rows are left out and the
 * reason is printed.
 */
import * as Layer from "effect/Layer"
import * as ManagedRuntime from "effect/ManagedRuntime"
import { join } from "node:path"
import { pathToFileURL } from "node:url"
import * as NodePtySpawner from "../../src/layers/NodePtySpawner.js"
import * as TerminalsLive from "../../src/layers/TerminalsLive.js"
import { Terminals } from "../../src/services/Terminals.js"
import { median, percentile, round } from "../lib/stats.js"
import { supplyPromiseWithResolvers } from "../lib/withResolvers.js"

/** One open terminal of a contender. */
interface OpenTerminal {
  /** Sends `text` with Enter and resolves with the settled result's text once the terminal is ready. */
  readonly send: (text: string) => Promise<{ readonly wait: string; readonly text: string }>
  /** Resolves once every process of the terminal is gone. */
  readonly close: () => Promise<void>
}

interface Contender {
  readonly id: string
  readonly label: string
  readonly open: () => Promise<OpenTerminal>
  readonly dispose: () => Promise<void>
}

/** One contender's numbers. */
export interface TerminalCost {
  readonly id: string
  readonly label: string
  /** Median and p90 ms of a send of `echo hi` until its result, over every send. */
  readonly sendMs: number
  readonly sendP90Ms: number
  /** Host CPU ms per send. */
  readonly sendCpuMs: number
  /** Median ms of an open until the first prompt, and of a close until every process is gone. */
  readonly openMs: number
  readonly closeMs: number
}

/** What the item found: the rows, and why the reference is missing when it is. */
export interface TerminalsItem {
  readonly rows: ReadonlyArray<TerminalCost>
  readonly referenceMissing?: string
}

const cwd = process.cwd()

const ours = async (): Promise<Contender> => {
  const runtime = ManagedRuntime.make(TerminalsLive.layer({ cwd }).pipe(Layer.provide(NodePtySpawner.layer)))
  const terminals = await runtime.runPromise(Terminals)
  return {
    id: "ours",
    label: "effect-bash `TerminalsLive`",
    open: async () => {
      const { id } = await runtime.runPromise(terminals.open("bench", { type: "shell" }))
      return {
        send: async (text) => {
          const result = await runtime.runPromise(terminals.send("bench", id, { text }))
          return { wait: result.wait, text: result.output }
        },
        close: async () => {
          await runtime.runPromise(terminals.close("bench", id))
        }
      }
    },
    dispose: () => runtime.dispose()
  }
}

supplyPromiseWithResolvers()

/** The parts of the reference's terminal service the bench calls. */
interface ReferenceTerminals {
  spawn(owner: object, request: { readonly type: string }): Promise<{ readonly sessionId: string }>
  startSend(owner: object, id: string, request: { readonly text: string; readonly submit: boolean }): {
    readonly done: Promise<{ readonly viewport: string; readonly waitReason: string }>
  }
  kill(owner: object, id: string): Promise<boolean>
}

interface ReferenceContext {
  plugin(plugin: unknown, config?: unknown): Promise<unknown>
  provide(name: string, value: unknown): unknown
  readonly terminals: ReferenceTerminals
  readonly fiber: { dispose(): Promise<unknown> }
}

/**
 * The reference composition as the harness makes it: the subprocess provider (`ctx.subprocess`), the
 * sandbox policy in `danger-full-access` (the shell starts directly, as ours does), the terminal
 * registry (`ctx.terminals`) and the bash backend; one registered agent owns the terminals.
 */
const reference = async (dir: string): Promise<Contender> => {
  const load = async (name: string) =>
    (await import(pathToFileURL(join(dir, "node_modules", "@deepseek-ai", name, "lib", "index.js")).href)) as Record<
      string,
      unknown
    >
  const { Context } = (await load("cordis")) as { Context: new() => ReferenceContext }
  const terminal = await load("dsh-terminal")
  const subprocess = await load("dsh-subprocess-local")
  const policy = await load("dsh-sandbox-policy")
  const backend = await load("dsh-terminal-bash")
  const root = new Context()
  await root.plugin(subprocess.LocalSubprocessRuntime)
  await root.plugin(policy.default, { mode: "danger-full-access", workspaceRoot: cwd })
  await root.plugin(terminal.default)
  await root.plugin(backend)
  const agent = { id: "bench-agent", ctx: root, session: { id: "bench", header: { id: "bench", cwd }, events: [] } }
  root.provide("agents", new Map([[agent.id, agent]]))
  return {
    id: "reference",
    label: "reference `dsh-terminal` + `dsh-terminal-bash`",
    open: async () => {
      const { sessionId } = await root.terminals.spawn(agent, { type: "shell" })
      return {
        send: async (text) => {
          const result = await root.terminals.startSend(agent, sessionId, { text, submit: true }).done
          return { wait: result.waitReason, text: result.viewport }
        },
        close: async () => {
          await root.terminals.kill(agent, sessionId)
        }
      }
    },
    dispose: async () => {
      await root.fiber.dispose()
    }
  }
}

const elapsed = async <A>(work: () => Promise<A>): Promise<{ readonly ms: number; readonly value: A }> => {
  const start = performance.now()
  const value = await work()
  return { ms: performance.now() - start, value }
}

/**
 * `rounds` rounds; in each, every contender in turn (the order rotated) opens a terminal, sends
 * `echo hi` `sends` times, and closes it. Every send must settle on the terminal's readiness with
 * `hi` in its result, or the item fails.
 */
export const measureTerminals = async (
  sends: number,
  rounds: number,
  log: (line: string) => void
): Promise<TerminalsItem> => {
  const contenders: Array<Contender> = [await ours()]
  const dir = process.env["BENCH_DSH_TERMINAL_DIR"]
  let referenceMissing: string | undefined
  if (dir === undefined) {
    referenceMissing = "BENCH_DSH_TERMINAL_DIR is not set (the directory the reference's terminal packages were installed into)"
  } else {
    try {
      contenders.push(await reference(dir))
    } catch (error) {
      referenceMissing = `${dir}: ${error instanceof Error ? error.message.split("\n")[0] : String(error)}`
    }
  }
  if (referenceMissing !== undefined) log(`reference terminals left out: ${referenceMissing}`)
  const samples = Object.fromEntries(
    contenders.map((contender) => [contender.id, { send: [] as Array<number>, cpu: [] as Array<number>, open: [] as Array<number>, close: [] as Array<number> }])
  )
  try {
    // One warm-up round each: module loads and the first PTY are not what is measured.
    for (const contender of contenders) {
      const terminal = await contender.open()
      await terminal.send("true")
      await terminal.close()
    }
    for (let r = 0; r < rounds; r++) {
      for (let i = 0; i < contenders.length; i++) {
        const contender = contenders[(r + i) % contenders.length]!
        const mine = samples[contender.id]!
        const opened = await elapsed(contender.open)
        mine.open.push(opened.ms)
        const cpuBefore = process.cpuUsage()
        for (let s = 0; s < sends; s++) {
          const sent = await elapsed(() => opened.value.send("echo hi"))
          if (sent.value.wait !== "stdin_read" || !/\bhi\r?\n/.test(sent.value.text)) {
            throw new Error(`${contender.id}: echo hi settled as ${sent.value.wait}: ${JSON.stringify(sent.value.text)}`)
          }
          mine.send.push(sent.ms)
        }
        const cpu = process.cpuUsage(cpuBefore)
        mine.cpu.push((cpu.user + cpu.system) / 1000 / sends)
        mine.close.push((await elapsed(opened.value.close)).ms)
      }
    }
  } finally {
    for (const contender of contenders) await contender.dispose()
  }
  const rows = contenders.map((contender): TerminalCost => {
    const mine = samples[contender.id]!
    return {
      id: contender.id,
      label: contender.label,
      sendMs: round(median(mine.send), 1),
      sendP90Ms: round(percentile(mine.send, 90), 1),
      sendCpuMs: round(median(mine.cpu), 2),
      openMs: round(median(mine.open), 1),
      closeMs: round(median(mine.close), 1)
    }
  })
  return referenceMissing === undefined ? { rows } : { rows, referenceMissing }
}
