/**
 * A measurement run in a fresh node process: the child prints one JSON report on stdout; its stderr
 * lines are passed on once it has exited (or named in the error when it fails).
 */
import { spawn } from "node:child_process"
import { basename } from "node:path"

export const childReport = <A>(
  nodeArgs: ReadonlyArray<string>,
  childScript: string,
  args: ReadonlyArray<string>,
  log?: (line: string) => void
): Promise<A> =>
  new Promise((resolve, reject) => {
    const name = basename(childScript, ".js")
    const child = spawn(process.execPath, [...nodeArgs, childScript, ...args], { stdio: ["ignore", "pipe", "pipe"] })
    let stdout = ""
    let stderr = ""
    child.stdout.setEncoding("utf8").on("data", (s: string) => (stdout += s))
    child.stderr.setEncoding("utf8").on("data", (s: string) => (stderr += s))
    child.once("error", reject)
    child.once("close", (code) => {
      if (code !== 0) return reject(new Error(`${name} exited ${code}: ${stderr}`))
      if (log !== undefined) for (const line of stderr.split("\n")) if (line !== "") log(`  ${line}`)
      try {
        resolve(JSON.parse(stdout) as A)
      } catch (error) {
        reject(new Error(`${name} printed no report: ${stdout} ${stderr} (${String(error)})`))
      }
    })
  })
