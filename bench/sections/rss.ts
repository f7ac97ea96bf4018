/**
 * Work item (d): peak RSS growth, each measurement in its own fresh node process.
 */
import { fileURLToPath } from "node:url"
import { childReport } from "../lib/childReport.js"
import type { RssReport } from "../lib/results.js"

const childScript = fileURLToPath(new URL("../rss-child.js", import.meta.url))

/** Runs one measurement in a fresh `node --expose-gc` child and returns its report. */
export const measureRss = (contender: RssReport["contender"], outputBytes: number, maxSpillBytes: number): Promise<RssReport> =>
  childReport<RssReport>(["--expose-gc"], childScript, [contender, String(outputBytes), String(maxSpillBytes)])
