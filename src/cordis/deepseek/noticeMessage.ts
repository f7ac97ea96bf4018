/**
 * A completion notice as the harness's agents take unprompted input: a frozen user message whose
 * source says which plugin sent it and that it is a `notice`. Built structurally (the shape of
 * `createUserMessage` in `@deepseek-ai/dsh-llm`), so the adapter imports nothing from the harness.
 */
import { randomUUID } from "node:crypto"
import type { CompletionNotices } from "../../services/CompletionNotices.js"
import { statusLine } from "../../tool/taskTexts.js"
import type { HarnessNoticeMessage } from "./harness.js"

/**
 * The harness's bound on a notice summary (`CONTEXT_SUMMARY_MAX_CHARS`).
 */
const summaryMaxChars = 120

/** At most `summaryMaxChars` UTF-16 units, ellipsized as the harness does, never splitting a surrogate pair. */
const bound = (line: string): string => {
  if (line.length <= summaryMaxChars) return line
  let end = summaryMaxChars - 1
  if (/[\uD800-\uDBFF]/.test(line.charAt(end - 1))) end -= 1
  return `${line.slice(0, end)}…`
}

/**
 * The one-line account shown on a collapsed transcript row: id, status line, then the label with
 * its whitespace (newlines included) folded.
 */
export const noticeSummary = (notice: CompletionNotices.Notice): string =>
  bound(`background task ${notice.task.id} finished ${statusLine(notice.task)} — ${notice.task.label.replace(/\s+/g, " ").trim()}`)

/**
 * The frozen message for one notice: a fresh UUID, the exact notice text as its only block.
 */
export const noticeMessage = (plugin: string, notice: CompletionNotices.Notice): HarnessNoticeMessage =>
  Object.freeze({
    id: randomUUID(),
    role: "user" as const,
    content: Object.freeze([Object.freeze({ type: "text" as const, text: notice.text })]),
    source: Object.freeze({ kind: "plugin" as const, plugin, form: "notice" as const, summary: noticeSummary(notice) })
  })
