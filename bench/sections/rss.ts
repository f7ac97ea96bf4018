/**
 * Work item (d): peak RSS growth, each measurement in its own fresh node process.
 */
import { spawn } from "node:child_process"
import { fileURLToPath } from "node:url"
import type { RssReport } from "../lib/results.js"

const childScript = fileURLToPath(new URL("../rss-child.js", import.meta.url))

/** Runs one measurement in a fresh `node --expose-gc` child and returns its report. */
export const measureRss = (contender: RssReport["contender"], outputBytes: number, maxSpillBytes: number): Promise<RssReport> =>
  new Promise((resolve, reject) => {
    const args = ["--expose-gc", childScript, contender, String(outputBytes), String(maxSpillBytes)]
    const child = spawn(process.execPath, args, { stdio: ["ignore", "pipe", "pipe"] })
    let stdout = ""
    let stderr = ""
    child.stdout.setEncoding("utf8").on("data", (s: string) => (stdout += s))
    child.stderr.setEncoding("utf8").on("data", (s: string) => (stderr += s))
    child.once("error", reject)
    child.once("close", (code) => {
      if (code !== 0) return reject(new Error(`rss-child exited ${code}: ${stderr}`))
      try {
        resolve(JSON.parse(stdout) as RssReport)
      } catch (error) {
        reject(new Error(`rss-child printed no report: ${stdout} ${stderr} (${String(error)})`))
      }
    })
  })
