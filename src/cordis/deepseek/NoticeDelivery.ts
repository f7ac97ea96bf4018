/**
 * Completion notices delivered to the harness agent that owns the task, the moment they can be:
 * `inject` into a running agent's next step, `followup` (a turn that wakes it) for an idle one while
 * it has wake budget left. The budget keeps notices from feeding themselves: at most
 * {@link maxConsecutiveWakes} follow-ups per owner until the owner claims a user-authored message.
 *
 * A notice waits while its session has a call in flight, and is taken only when the last one ends:
 * a `task_output` or `task_kill` result that shows the task's final status drops it first, so the
 * model is never told twice. A running agent claims injected context only at its next step, after
 * those calls, so the wait delays nothing it would see.
 */
import type { CompletionNotices } from "../../services/CompletionNotices.js"
import type { HarnessAgent, HarnessNoticeMessage } from "./harness.js"
import { noticeMessage } from "./noticeMessage.js"

/**
 * `wakeup`: an idle owner is woken (within its budget); `quiet`: notices are always injected (no
 * turn is ever opened for one, for deterministic transcripts).
 */
export type CompletionDelivery = "wakeup" | "quiet"

/**
 * Follow-ups an owner may receive in a row before further notices are only injected.
 */
export const maxConsecutiveWakes = 3

/**
 * An agent that takes unprompted messages.
 */
export interface NoticeTarget {
  readonly status?: unknown
  readonly inject: (message: HarnessNoticeMessage) => void
  readonly followup: (message: HarnessNoticeMessage) => void
}

/**
 * The agent as a notice target, when it has both lanes (an older harness's agent has neither).
 */
export const noticeTargetOf = (agent: HarnessAgent | undefined): NoticeTarget | undefined =>
  typeof agent?.inject === "function" && typeof agent.followup === "function" ? agent as NoticeTarget : undefined

/**
 * What the delivery needs from the plugin.
 */
export interface NoticeDeliveryOptions {
  readonly mode: CompletionDelivery
  /** The plugin name the messages carry as their source. */
  readonly plugin: string
  /** Takes the waiting notices of a session, each once. */
  readonly take: (session: string) => ReadonlyArray<CompletionNotices.Notice>
  /** Whether the session has a call in flight. */
  readonly busy: (session: string) => boolean
  /** An agent refused a message (e.g. it was disposed meanwhile). */
  readonly report: (error: unknown) => void
}

/**
 * Notice targets by session, their wake budgets, and the delivery itself.
 */
export class NoticeDelivery {
  private readonly targets = new Map<string, NoticeTarget>()
  private readonly wakes = new Map<string, number>()
  private closed = false

  constructor(private readonly options: NoticeDeliveryOptions) {}

  /** A call of `session` runs for `agent`: the session's notices go to it from now on. */
  track(session: string, agent: HarnessAgent): void {
    const target = noticeTargetOf(agent)
    if (target !== undefined) this.targets.set(session, target)
  }

  /** Delivers what waits for `session`, unless a call of it is in flight (its end flushes again). */
  flush(session: string | undefined): void {
    if (this.closed || session === undefined || this.options.busy(session)) return
    const target = this.targets.get(session)
    if (target === undefined) return
    let notices: ReadonlyArray<CompletionNotices.Notice>
    try {
      notices = this.options.take(session)
    } catch (error) {
      // Called from a call's end: this must not turn that call's result into an error.
      return this.options.report(error)
    }
    for (const notice of notices) this.deliver(session, target, notice)
  }

  /** The owner claimed a user-authored message: its wake budget is full again. */
  userInput(session: string): void {
    this.wakes.delete(session)
  }

  /** The agent left its registry: nothing more goes to it. */
  forget(agent: unknown): void {
    for (const [session, target] of this.targets) {
      if (target === agent) {
        this.targets.delete(session)
        this.wakes.delete(session)
      }
    }
  }

  /** The plugin is unloading: nothing is delivered any more. */
  close(): void {
    this.closed = true
    this.targets.clear()
  }

  private deliver(session: string, target: NoticeTarget, notice: CompletionNotices.Notice): void {
    const message = noticeMessage(this.options.plugin, notice)
    const woken = this.wakes.get(session) ?? 0
    try {
      if (this.options.mode === "wakeup" && target.status === "idle" && woken < maxConsecutiveWakes) {
        this.wakes.set(session, woken + 1)
        target.followup(message)
      } else {
        target.inject(message)
      }
    } catch (error) {
      this.options.report(error)
    }
  }
}
