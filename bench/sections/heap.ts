/**
 * Work item (l): our executor with the launcher, with `directSpawn`, and the reference executor, each
 * host heap size in a fresh node process (`heap-child.ts`) so one size's heap never weighs on another.
 */
import { spawn } from "node:child_process"
import { fileURLToPath } from "node:url"
import type { HeapCalls } from "../lib/results.js"

const childScript = fileURLToPath(new URL("../heap-child.js", import.meta.url))

/** Runs one heap size's measurement in its own process; the child's stderr lines go to `log`. */
export const measureHeap = (
  retainedMiB: number,
  rounds: number,
  block: number,
  log: (line: string) => void
): Promise<HeapCalls> =>
  new Promise((resolve, reject) => {
    // Room for the retained heap and the work around it.
    const args = ["--expose-gc", `--max-old-space-size=${retainedMiB + 1024}`, childScript, String(retainedMiB), String(rounds), String(block)]
    const child = spawn(process.execPath, args, { stdio: ["ignore", "pipe", "pipe"] })
    let stdout = ""
    let stderr = ""
    child.stdout.setEncoding("utf8").on("data", (s: string) => (stdout += s))
    child.stderr.setEncoding("utf8").on("data", (s: string) => (stderr += s))
    child.once("error", reject)
    child.once("close", (code) => {
      if (code !== 0) return reject(new Error(`heap-child exited ${code}: ${stderr}`))
      for (const line of stderr.split("\n")) if (line !== "") log(`  ${line}`)
      try {
        resolve(JSON.parse(stdout) as HeapCalls)
      } catch (error) {
        reject(new Error(`heap-child printed no report: ${stdout} ${stderr} (${String(error)})`))
      }
    })
  })
