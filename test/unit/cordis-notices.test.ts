/**
 * NoticeDelivery on its own: which lane a notice takes, and when nothing is delivered at all.
 */
import { describe, expect, it } from "vitest"
import type { NoticeDeliveryOptions } from "../../src/cordis/deepseek/NoticeDelivery.js"
import { maxConsecutiveWakes, NoticeDelivery } from "../../src/cordis/deepseek/NoticeDelivery.js"
import { noticeSummary } from "../../src/cordis/deepseek/noticeMessage.js"
import type { CompletionNotices } from "../../src/services/CompletionNotices.js"

const noticeOf = (id: string, label = "make build"): CompletionNotices.Notice => ({
  task: { id, kind: "bash", label, owner: "s1", status: "completed", detail: "exit code: 0" },
  text: `background task ${id} (bash: ${label}) finished [status: completed, exit code: 0]. Read its output with task_output.`
})

const setup = (options: Partial<NoticeDeliveryOptions> = {}) => {
  const waiting: Array<CompletionNotices.Notice> = []
  const lanes: Array<string> = []
  const reported: Array<unknown> = []
  const agent = {
    session: { header: { id: "s1" } },
    status: "idle",
    inject: () => void lanes.push("inject"),
    followup: () => void lanes.push("followup")
  }
  const delivery = new NoticeDelivery({
    mode: "wakeup",
    plugin: "effect-bash",
    take: () => waiting.splice(0),
    busy: () => false,
    report: (error) => void reported.push(error),
    ...options
  })
  return { waiting, lanes, reported, agent, delivery }
}

describe("NoticeDelivery", () => {
  it("delivers nothing after close", () => {
    const { waiting, lanes, agent, delivery } = setup()
    delivery.track("s1", agent)
    delivery.close()
    waiting.push(noticeOf("bash-1"))
    delivery.flush("s1")
    expect(lanes).toEqual([])
    expect(waiting).toHaveLength(1)
  })

  it("delivers nothing to an agent that left its registry", () => {
    const { waiting, lanes, agent, delivery } = setup()
    delivery.track("s1", agent)
    delivery.forget(agent)
    waiting.push(noticeOf("bash-1"))
    delivery.flush("s1")
    expect(lanes).toEqual([])
  })

  it("ignores an agent without both lanes", () => {
    const { waiting, lanes, delivery } = setup()
    delivery.track("s1", { session: { header: { id: "s1" } }, inject: () => void lanes.push("inject") })
    waiting.push(noticeOf("bash-1"))
    delivery.flush("s1")
    expect(lanes).toEqual([])
    expect(waiting).toHaveLength(1)
  })

  it("wakes an idle owner at most maxConsecutiveWakes times in a row, one notice per message", () => {
    const { waiting, lanes, agent, delivery } = setup()
    delivery.track("s1", agent)
    waiting.push(...[1, 2, 3, 4, 5].map((n) => noticeOf(`bash-${n}`)))
    delivery.flush("s1")
    expect(maxConsecutiveWakes).toBe(3)
    expect(lanes).toEqual(["followup", "followup", "followup", "inject", "inject"])
  })

  it("reports instead of throwing when the notices cannot be taken or an agent refuses one", () => {
    const failing = setup({ take: () => { throw new Error("runtime closed") } })
    failing.delivery.track("s1", failing.agent)
    expect(() => failing.delivery.flush("s1")).not.toThrow()
    expect(failing.reported).toEqual([new Error("runtime closed")])

    const refusing = setup()
    refusing.delivery.track("s1", { ...refusing.agent, followup: () => { throw new Error("agent disposed") } })
    refusing.waiting.push(noticeOf("bash-1"))
    expect(() => refusing.delivery.flush("s1")).not.toThrow()
    expect(refusing.reported).toEqual([new Error("agent disposed")])
  })
})

describe("noticeSummary", () => {
  it("is one line of at most 120 characters", () => {
    expect(noticeSummary(noticeOf("bash-1", "npm run dev"))).toBe(
      "background task bash-1 finished [status: completed, exit code: 0] — npm run dev"
    )
    const long = noticeSummary(noticeOf("bash-2", `for f in *; do\n  echo "$f"\ndone ${"x".repeat(200)}`))
    expect(long).toHaveLength(120)
    expect(long).toMatch(/^background task bash-2 finished \[status: completed, exit code: 0\] — for f in \*; do echo "\$f" done x+…$/)
    // A cut never leaves half of a surrogate pair.
    const emoji = noticeSummary(noticeOf("bash-3", "😀".repeat(100)))
    expect(emoji).toMatch(/…$/)
    expect(emoji.length).toBeLessThanOrEqual(120)
    expect(emoji.slice(0, -1)).not.toMatch(/[\uD800-\uDBFF]$/)
  })
})
