import { defineConfig } from "vitest/config"
import { SlowFirstSequencer } from "./test/support/slowFirstSequencer.js"
import { SummaryReporter } from "./test/support/summaryReporter.js"
import { UnitCoverageOnly } from "./test/support/unitCoverageOnly.js"

// The supervision's rules are proven under TestClock: the unit project alone must reach every branch
// of these (`vitest run --coverage`, as `npm test` runs it, fails below).
const supervision = ["src/layers/internal/executor/supervise.ts", "src/layers/internal/executor/killGroup.ts"]

export default defineConfig({
  test: {
    reporters: ["default", new SummaryReporter(), new UnitCoverageOnly()],
    coverage: {
      provider: "v8",
      include: supervision,
      reporter: ["text"],
      thresholds: { perFile: true, branches: 100 }
    },
    testTimeout: 60_000,
    hookTimeout: 60_000,
    sequence: { sequencer: SlowFirstSequencer },
    poolOptions: {
      // The process files mostly wait on the processes they start (startups, grace periods, timeouts):
      // more files than cores at a time keep both cores busy. Vitest's default, one fewer fork
      // than cores, would run them one at a time on 2 cores.
      // A fork runs file after file (`isolate: false`), so effect and the sources load once per fork;
      // each file still counts only the processes it started, and leaves none behind. The pool never
      // shrinks (`minForks` = `maxForks`): a fork that tinypool retires as idle while vitest hands it
      // the next file is killed with that file's task on it ("Terminating worker thread").
      forks: { maxForks: 3, minForks: 3, isolate: false },
      // The unit files (threads) share their worker's loaded modules, so effect and the sources load
      // once per worker, not once per file; each file's setup still runs, and no unit file leaves
      // state behind (they pass in any order: --sequence.shuffle.files).
      threads: { isolate: false }
    },
    projects: [
      {
        extends: true,
        test: {
          name: "unit",
          include: ["test/unit/**/*.test.ts"],
          // TestClock, fake spawner, scripted executor: no process may start (the setup refuses it).
          setupFiles: ["test/support/noProcesses.ts"],
          pool: "threads"
        }
      },
      {
        extends: true,
        test: {
          name: "process",
          // Real processes: bash, the built CLI, bwrap, the host-death reaper.
          include: ["test/process/**/*.test.ts"],
          // Real-process tests count processes in /proc: a fork runs one file at a time, so the children of its
          // process are that file's, and the setup fails a file that leaves any behind.
          pool: "forks",
          setupFiles: ["test/support/noChildrenLeft.ts"]
        }
      }
    ]
  }
})
