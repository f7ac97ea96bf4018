import { defineConfig } from "vitest/config"

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // Real-process tests count processes in /proc; forks keep each file's children in its own worker.
    pool: "forks"
  }
})
