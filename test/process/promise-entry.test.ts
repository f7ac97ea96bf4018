/**
 * `effect-bash/promise` as an app gets it: the bundle (`dist/bin/promise.mjs`, its own Effect 3
 * inside) imported by a plain Node program, which runs a command, starts a background task, reads
 * its output and closes. Once closed, nothing of the stack runs on: the program exits by itself and
 * its task's process is gone.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { existsSync } from "node:fs"
import { dirname, join } from "node:path"
import { pathToFileURL } from "node:url"
import { cleanEnv, cliPath, runNode } from "../support/cli.js"

const promiseEntry = pathToFileURL(join(dirname(cliPath), "promise.mjs")).href

const program = `
import { createEffectBash } from ${JSON.stringify(promiseEntry)}
const bash = await createEffectBash()
const ran = await bash.run("echo hi")
const { taskId } = await bash.start("echo pid $$; exec sleep 300")
let output = ""
while (!output.includes("pid ")) {
  const read = await bash.output(taskId, { wait: true, timeoutMs: 1000 })
  output += read.isError ? "" : read.value.output
}
const invalid = await bash.callTool("bash", { command: 1 })
await bash.close()
const closed = await bash.run("echo late").then(() => "ran", (error) => error.message)
console.log(JSON.stringify({ ran, taskId, output, invalid, closed }))
`

describe("effect-bash/promise", () => {
  it.live("a plain Node program runs a command and a background task, closes, and nothing runs on", () =>
    Effect.gen(function*() {
      const outcome = yield* Effect.promise(() =>
        runNode(["--input-type=module", "-e", program], { env: cleanEnv() })
      )
      expect(outcome).toMatchObject({ code: 0, signal: null })
      const report = JSON.parse(outcome.stdout)
      expect(report.ran).toMatchObject({ isError: false, text: "hi\n", value: { kind: "foreground", exitCode: 0 } })
      expect(report.invalid).toEqual({
        isError: true,
        text: "Error: invalid command: expected a non-empty string",
        message: "invalid command: expected a non-empty string"
      })
      expect(report.closed).toBe("effect-bash: closed")
      const pid = Number(/pid (\d+)/.exec(report.output)![1])
      expect(existsSync(`/proc/${pid}`)).toBe(false)
    }))
})
