/**
 * The inbox between a terminal's PTY and its pump: the PTY is stopped once the output held reaches
 * the byte budget (it holds then the budget plus the chunk that reached it) and read again at half,
 * and events keep their order with the exit last.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { PtyInbox } from "../../src/layers/internal/terminal/ptyInbox.js"

describe("PtyInbox", () => {
  it.effect("stops the PTY as the output held reaches the budget, and reads it again at half", () =>
    Effect.gen(function*() {
      const inbox = yield* PtyInbox.make(4_096)
      let resumes = 0
      inbox.connect(Effect.sync(() => {
        resumes++
      }))
      const chunk = (i: number) => `${i}`.padEnd(1_000, ".")
      // A reader that stops as told: 5 chunks reach the budget, the 5th is the one that stops it.
      const accepted = [1, 2, 3, 4, 5].map((i) => inbox.offerData(chunk(i)))
      expect(accepted).toEqual([true, true, true, true, false])
      expect(inbox.highWater).toBe(5_000)
      expect(inbox.pending).toBe(true)
      // A chunk already on its way when the PTY stops is taken, and stops it no second time.
      expect(inbox.offerData(chunk(6))).toBe(false)
      expect(inbox.pauses).toBe(1)
      inbox.offerExit({ exitCode: 0, signal: null })
      const taken: Array<string> = []
      for (let i = 0; i < 7; i++) {
        const event = yield* inbox.take
        taken.push(event._tag === "data" ? event.chunk : "exit")
        yield* inbox.settle(event)
        // Read again once at most half the budget is held (after the 4th chunk), and only once.
        expect(resumes).toBe(i >= 3 ? 1 : 0)
      }
      expect(taken).toEqual([chunk(1), chunk(2), chunk(3), chunk(4), chunk(5), chunk(6), "exit"])
      expect(inbox.pending).toBe(false)
    }))

  it.effect("counts bytes, not characters", () =>
    Effect.gen(function*() {
      const inbox = yield* PtyInbox.make(10)
      expect(inbox.offerData("éé")).toBe(true)
      expect(inbox.offerData("ééé")).toBe(false)
      expect(inbox.highWater).toBe(10)
    }))
})
