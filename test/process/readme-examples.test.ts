/**
 * The examples of the README and docs/*.md cannot rot: `scripts/readme-examples.mjs` type-checks every
 * ```ts block strictly (NodeNext, the package's own declarations checked too) against the built package
 * through its self-reference, and runs each one (vitest for `@effect/vitest` blocks), checking what
 * their `console.log` lines say they print; a call with an object literal shown in the prose's inline
 * code (`BashStack.layer({ … })`) is type-checked after the block above it. `npm test` builds `dist/` before vitest runs.
 */
import { execFile } from "node:child_process"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "vitest"

const root = join(dirname(fileURLToPath(import.meta.url)), "..", "..")

describe("README examples", () => {
  it("type-check against the built package and run", async () => {
    // Bounds that catch a hang only: on a loaded machine the type-check and the runs take minutes.
    const outcome = await new Promise<{ readonly code: number | null; readonly output: string }>((resolve) => {
      execFile(
        process.execPath,
        [join(root, "scripts", "readme-examples.mjs"), "--dir", join(root, ".scratch", "readme-examples")],
        { cwd: root, timeout: 400_000, killSignal: "SIGKILL" },
        (error, stdout, stderr) =>
          resolve({ code: error === null ? 0 : typeof error.code === "number" ? error.code : null, output: stdout + stderr })
      )
    })
    expect(outcome.output).toContain("PASS readme examples")
    expect(outcome.code).toBe(0)
  }, 420_000)
})
