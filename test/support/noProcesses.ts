/**
 * Setup for the unit project: starting a process through `node:child_process` from our code or the
 * tests fails the test that tried, naming the call, so a real-process test cannot hide among the unit
 * tests. (Packages vitest does not transform, e.g. the MCP SDK's stdio client, are not covered.)
 */
import { vi } from "vitest"

vi.mock("node:child_process", async (importOriginal) => {
  const actual = await importOriginal<typeof import("node:child_process")>()
  const refuse = (name: string) => () => {
    throw new Error(`unit tests start no process: node:child_process.${name} was called (it belongs in the process project)`)
  }
  const names = ["spawn", "spawnSync", "exec", "execSync", "execFile", "execFileSync", "fork"] as const
  const refused = Object.fromEntries(names.map((name) => [name, refuse(name)]))
  return { ...actual, ...refused, default: { ...actual, ...refused } }
})
