/**
 * Completion notices waiting for their owner, rendered once and handed out once.
 */
import type { Tasks } from "../services/Tasks.js"
import type { CompletionNotices } from "../services/CompletionNotices.js"
import { renderTaskNotice } from "./taskTexts.js"

// Far above any real backlog; only a host that never takes notices reaches it (oldest dropped).
const maxPerOwner = 256

/**
 * Notices by owner.
 */
export class PendingNotices {
  private readonly byOwner = new Map<string | undefined, Array<CompletionNotices.Notice>>()

  add(notice: Tasks.Notice): void {
    const queue = this.byOwner.get(notice.owner) ?? []
    queue.push({ task: notice.task, text: renderTaskNotice(notice) })
    if (queue.length > maxPerOwner) queue.shift()
    this.byOwner.set(notice.owner, queue)
  }

  /** The owner has seen this task's final status: its notice would tell it nothing. */
  seen(taskId: string): void {
    for (const [owner, queue] of this.byOwner) {
      const rest = queue.filter((notice) => notice.task.id !== taskId)
      if (rest.length === 0) this.byOwner.delete(owner)
      else this.byOwner.set(owner, rest)
    }
  }

  take(owner: string | undefined): ReadonlyArray<CompletionNotices.Notice> {
    const queue = this.byOwner.get(owner) ?? []
    this.byOwner.delete(owner)
    return queue
  }
}
