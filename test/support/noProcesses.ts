/**
 * Setup for the unit project: starting a process through `node:child_process` from our code or the
 * tests fails the test that tried, naming the call, so a real-process test cannot hide among the unit
 * tests. The call throws, and the test fails even where the code under test caught that (a helper
 * whose failed start is only logged). (Packages vitest does not transform, e.g. the MCP SDK's stdio
 * client, are not covered.)
 */
import { afterAll, afterEach, expect, vi } from "vitest"

// One list for every file of a worker: with isolation off, the mocked module (and so the calls it
// records) outlives the file whose setup made it.
const attempts = (): Array<string> =>
  ((globalThis as { __effectBashProcessAttempts?: Array<string> }).__effectBashProcessAttempts ??= [])

vi.mock("node:child_process", async (importOriginal) => {
  const actual = await importOriginal<typeof import("node:child_process")>()
  const refuse = (name: string) => () => {
    const message = `unit tests start no process: node:child_process.${name} was called (it belongs in the process project)`
    const error = new Error(message)
    // Named by the test running at the time, with where it was called: a caught refusal is reported
    // by the next check, which may be another test's.
    attempts().push(`${message}, during ${JSON.stringify(expect.getState().currentTestName ?? "no test")}\n${error.stack}`)
    throw error
  }
  const names = ["spawn", "spawnSync", "exec", "execSync", "execFile", "execFileSync", "fork"] as const
  const refused = Object.fromEntries(names.map((name) => [name, refuse(name)]))
  return { ...actual, ...refused, default: { ...actual, ...refused } }
})

const noneAttempted = () => expect(attempts().splice(0), "processes the test tried to start").toEqual([])
afterEach(noneAttempted)
// A start after the file's last test has ended.
afterAll(noneAttempted)
