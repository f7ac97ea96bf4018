/**
 * Work item (l): our executor with `posix_spawn`, with `directSpawn`, and the reference executor, each
 * host heap size in a fresh node process (`heap-child.ts`) so one size's heap never weighs on another.
 */
import { fileURLToPath } from "node:url"
import { childReport } from "../lib/childReport.js"
import type { HeapCalls } from "../lib/results.js"

const childScript = fileURLToPath(new URL("../heap-child.js", import.meta.url))

/** Runs one heap size's measurement in its own process; the child's stderr lines go to `log`. */
export const measureHeap = (
  retainedMiB: number,
  rounds: number,
  block: number,
  warmUp: number,
  log: (line: string) => void
): Promise<HeapCalls> =>
  // Room for the retained heap and the work around it.
  childReport<HeapCalls>(
    ["--expose-gc", `--max-old-space-size=${retainedMiB + 1024}`],
    childScript,
    [String(retainedMiB), String(rounds), String(block), String(warmUp)],
    log
  )
