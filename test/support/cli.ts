/**
 * Helpers for the real-process CLI tests: run the bundled `effect-bash` executable, and poll.
 */
import type { ChildProcess } from "node:child_process"
import { spawn } from "node:child_process"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import { pollUntil } from "./poll.js"

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
    /** The working directory (default: this process's). */
    readonly cwd?: string
  } = {}
): { readonly child: ChildProcess; readonly done: Promise<CliOutcome> } => {
  const started = Date.now()
  const child = spawn(process.execPath, args, {
    ...(options.cwd === undefined ? {} : { cwd: options.cwd }),
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

/** Polls `condition` until it holds; false if it still does not after `timeoutMs`. */
export const eventually = (condition: () => boolean, timeoutMs = 15_000): Promise<boolean> =>
  pollUntil(condition, (holds) => holds, timeoutMs)
