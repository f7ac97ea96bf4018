import { configDefaults, defineConfig } from "vitest/config"
import { SummaryReporter } from "./test/support/summaryReporter.js"

/** Tests that start real processes (bash, the built CLI, bwrap, the host-death reaper). */
const processTests = [
  "agent-loop",
  "cli-run",
  "cli-sandbox",
  "cli-shutdown-process",
  "cordis-bare",
  "cordis-harness",
  "cordis-seam",
  "demo",
  "executor-env-process",
  "executor-input",
  "executor-live",
  "executor-output",
  "executor-spans-process",
  "executor-streaming-process",
  "host-death",
  "host-exit",
  "inherited-fds",
  "mcp-stdio",
  "readme-examples",
  "reliability-mcp-process",
  "reliability-soak",
  "sandbox-config",
  "sandbox-live",
  "settings-schema-process",
  "spawner-exit",
  "spill-full-disk",
  "stack"
].map((name) => `test/${name}.test.ts`)

export default defineConfig({
  test: {
    reporters: ["default", new SummaryReporter()],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    projects: [
      {
        extends: true,
        test: {
          name: "unit",
          include: ["test/**/*.test.ts"],
          exclude: [...configDefaults.exclude, ...processTests],
          // TestClock, fake spawner, scripted executor: no process may start (the setup refuses it).
          setupFiles: ["test/support/noProcesses.ts"],
          pool: "threads"
        }
      },
      {
        extends: true,
        test: {
          name: "process",
          include: processTests,
          // Real-process tests count processes in /proc; forks keep each file's children in its own worker.
          pool: "forks"
        }
      }
    ]
  }
})
