/**
 * Helpers for the real-process CLI tests: run the bundled `effect-bash` executable, and look processes up
 * in /proc (a zombie counts as gone).
 */
import type { ChildProcess } from "node:child_process"
import { spawn } from "node:child_process"
import { readdirSync, readFileSync } from "node:fs"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"

/**
 * The bundled executable, the file the package's `bin` names: what a user runs is what these tests run
 * (`npm test` builds it before vitest runs).
 */
export const cliPath = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "dist", "bin", "effect-bash.js")

/** How one CLI run ended. */
export interface CliOutcome {
  readonly code: number | null
  readonly signal: string | null
  readonly stdout: string
  readonly stderr: string
  readonly elapsedMs: number
}

/** The environment without inherited EFFECT_BASH_* settings, plus `extra`. */
export const cleanEnv = (extra: Record<string, string> = {}): Record<string, string> => ({
  ...Object.fromEntries(
    Object.entries(process.env).filter((entry): entry is [string, string] =>
      entry[1] !== undefined && !entry[0].startsWith("EFFECT_BASH_")
    )
  ),
  ...extra
})

/** A started `node ...args` process and its outcome once it closes (killed after `limitMs`). */
const startNode = (
  args: ReadonlyArray<string>,
  options: {
    readonly env?: Record<string, string>
    readonly limitMs?: number
    /** Descriptors from fd 3 on that the CLI inherits (as Node's `stdio` entries). */
    readonly extraFds?: ReadonlyArray<"ignore" | number>
  } = {}
): { readonly child: ChildProcess; readonly done: Promise<CliOutcome> } => {
  const started = Date.now()
  const child = spawn(process.execPath, args, {
    env: options.env ?? cleanEnv(),
    stdio: ["ignore", "pipe", "pipe", ...(options.extraFds ?? [])]
  })
  const done = new Promise<CliOutcome>((resolve, reject) => {
    let stdout = ""
    let stderr = ""
    child.stdout?.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk))
    child.stderr?.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk))
    // Below the 60 s test timeout, so a hung run still reports its outcome; generous for a loaded machine.
    const limit = setTimeout(() => child.kill("SIGKILL"), options.limitMs ?? 45_000)
    child.on("error", reject)
    child.on("close", (code, signal) => {
      clearTimeout(limit)
      resolve({ code, signal, stdout, stderr, elapsedMs: Date.now() - started })
    })
  })
  return { child, done }
}

/** A started CLI process and its outcome once it closes (killed after `limitMs`). */
export const startCli = (args: ReadonlyArray<string>, options: Parameters<typeof startNode>[1] = {}) =>
  startNode([cliPath, ...args], options)

/** Runs `node main.js ...args` to completion (killed after `limitMs`). */
export const runCli = (
  args: ReadonlyArray<string>,
  options: Parameters<typeof startNode>[1] = {}
): Promise<CliOutcome> => startCli(args, options).done

/** Runs `node ...args` to completion (killed after `limitMs`). */
export const runNode = (
  args: ReadonlyArray<string>,
  options: Parameters<typeof startNode>[1] = {}
): Promise<CliOutcome> => startNode(args, options).done

interface ProcStat {
  readonly pid: number
  readonly state: string
  readonly ppid: number
  readonly pgrp: number
}

/** `/proc/<pid>/stat`, or undefined when the process is gone. */
export const procStat = (pid: number): ProcStat | undefined => {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8")
    // The command name (field 2) may contain spaces and parentheses: parse after its last ")".
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
    return { pid, state: fields[0] ?? "", ppid: Number(fields[1]), pgrp: Number(fields[2]) }
  } catch {
    return undefined
  }
}

/** Whether `pid` is a live (non-zombie) process. */
export const isAlive = (pid: number): boolean => {
  const stat = procStat(pid)
  return stat !== undefined && stat.state !== "Z"
}

const allProcesses = (): Array<ProcStat> =>
  readdirSync("/proc")
    .filter((name) => /^\d+$/.test(name))
    .flatMap((name) => {
      const stat = procStat(Number(name))
      return stat === undefined || stat.state === "Z" ? [] : [stat]
    })

/** The live children of `pid`. */
export const childrenOf = (pid: number): Array<number> =>
  allProcesses().filter((p) => p.ppid === pid).map((p) => p.pid)

/** Every live descendant of `pid`. */
export const descendantsOf = (pid: number): Array<number> => {
  const processes = allProcesses()
  const found: Array<number> = []
  let frontier = [pid]
  while (frontier.length > 0) {
    const children = processes.filter((p) => frontier.includes(p.ppid)).map((p) => p.pid)
    found.push(...children)
    frontier = children
  }
  return found
}

/** Live members of any of the process groups `pgids`. */
export const membersOfGroups = (pgids: ReadonlyArray<number>): Array<number> =>
  allProcesses().filter((p) => pgids.includes(p.pgrp)).map((p) => p.pid)

/** Polls `condition` every 20 ms until it holds; false if it still does not after `timeoutMs`. */
export const eventually = async (condition: () => boolean, timeoutMs = 15_000): Promise<boolean> => {
  const deadline = Date.now() + timeoutMs
  while (!condition()) {
    if (Date.now() > deadline) return false
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
  return true
}
