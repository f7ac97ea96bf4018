import { defineConfig } from "vitest/config"
import { SummaryReporter } from "./test/support/summaryReporter.js"

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    reporters: ["default", new SummaryReporter()],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // Real-process tests count processes in /proc; forks keep each file's children in its own worker.
    pool: "forks"
  }
})
