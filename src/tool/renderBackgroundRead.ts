/**
 * The model-facing text of one consuming read of a background process.
 */
import type { BashExecutor } from "../services/BashExecutor.js"
import { appendLines } from "./appendLines.js"
import { modelText } from "./modelText.js"

/**
 * The lossy-read notice: `[some output was dropped from memory; full output: <paths or (unavailable)>]`.
 */
const lossyNotice = (read: BashExecutor.OutputRead): string => {
  const paths = [read.stdoutSpillPath, read.stderrSpillPath].filter((p): p is string => p !== undefined)
  return `[some output was dropped from memory; full output: ${paths.length > 0 ? paths.join(", ") : "(unavailable)"}]`
}

/**
 * The delta (made model-readable; after a lossy gap its head may be a cut escape sequence), then
 * the lossy notice and `notices` (sandbox lines), each on its own line. May be empty.
 */
export const renderBackgroundRead = (read: BashExecutor.OutputRead, notices: ReadonlyArray<string> = []): string => {
  const lines = [...(read.lossy ? [lossyNotice(read)] : []), ...notices]
  return appendLines(modelText(read.delta, read.lossy), lines)
}
