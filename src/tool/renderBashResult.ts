/**
 * The model-facing text of a `bash` result.
 */
import type { BashExecutor } from "../services/BashExecutor.js"
import { mergeStreams } from "../services/internal/mergeStreams.js"
import { appendLines } from "./appendLines.js"
import { modelText, tailText } from "./modelText.js"
import { sandboxNotices } from "./sandboxNotices.js"

const truncationNotice = (output: BashExecutor.CollectedOutput): string =>
  `[output truncated; full output: ${output.spillPath ?? "(unavailable)"}]`

/** A stream's text, with the truncation notice appended when only its tail was kept. */
const streamText = (output: BashExecutor.CollectedOutput): string => {
  const text = output.truncated ? tailText(output.text) : modelText(output.text, false)
  return output.truncated ? `${text}\n${truncationNotice(output)}` : text
}

/**
 * The output part of a foreground run's text: both streams merged, with their truncation notices;
 * empty when the run printed nothing (the text then says `(no output)`).
 */
export const renderForegroundOutput = (result: BashExecutor.RunResult): string =>
  mergeStreams(streamText(result.stdout), streamText(result.stderr))

/**
 * The truncation notices of a foreground run, stdout's first: what a reader who saw the output live
 * needs to know about it afterwards (with the markers that end the text).
 */
export const truncationNotices = (result: BashExecutor.RunResult): ReadonlyArray<string> =>
  [result.stdout, result.stderr].filter((output) => output.truncated).map(truncationNotice)

/**
 * The text of a completed foreground run: stdout, an optional `[stderr]` section, `(no output)` when
 * both are empty, then the markers — sandbox, timeout, and last the signal or non-zero exit.
 */
export const renderForeground = (result: BashExecutor.RunResult, escalationOffered: boolean): string => {
  const joined = renderForegroundOutput(result)
  const body = joined === "" ? "(no output)" : joined
  const markers = [
    ...(result.networkRefusals ?? []),
    ...sandboxNotices(result.sandbox, escalationOffered),
    ...(result.timedOut ? [`[timed out after ${result.timeoutMs}ms]`] : []),
    ...(result.signal !== null
      ? [`[killed by signal: ${result.signal}]`]
      : result.exitCode !== null && result.exitCode !== 0
      ? [`[exit code: ${result.exitCode}]`]
      : [])
  ]
  return appendLines(body, markers)
}

/**
 * The acknowledgement of a background start, exactly `started background task <id>`.
 */
export const renderBackgroundStart = (taskId: string): string => `started background task ${taskId}`
