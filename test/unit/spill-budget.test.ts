/**
 * The spill budget's rules, without files: what is removed, in which order, and what is refused.
 */
import { describe, expect, it } from "vitest"
import { SpillBudget } from "../../src/layers/internal/executor/SpillBudget.js"

describe("SpillBudget", () => {
  it("removes finished files oldest-finished first, and only as much as a newer spill needs", () => {
    const budget = new SpillBudget(100)
    const [a, b, c] = ["a", "b", "c"].map((path) => budget.open(path))
    expect(budget.reserve(b!, 30)).toEqual([])
    expect(budget.reserve(a!, 30)).toEqual([])
    // b finishes before a: b is the oldest finished file.
    budget.finish(b!)
    budget.finish(a!)
    expect(budget.reserve(c!, 40)).toEqual([])
    expect(budget.reserve(c!, 10)).toEqual(["b"])
    expect([a!.state, b!.state]).toEqual(["finished", "removed"])
    expect(budget.reserve(c!, 30)).toEqual(["a"])
  })

  it("never removes a file still being written: a write that cannot fit is refused and changes nothing", () => {
    const budget = new SpillBudget(100)
    const [writing, finished, newcomer] = ["writing", "finished", "newcomer"].map((path) => budget.open(path))
    expect(budget.reserve(writing!, 70)).toEqual([])
    expect(budget.reserve(finished!, 20)).toEqual([])
    budget.finish(finished!)
    // 70 held + 31 > 100 even with the finished file gone: refused, and the finished file stays.
    expect(budget.reserve(newcomer!, 31)).toBeUndefined()
    expect(finished!.state).toBe("finished")
    expect(budget.reserve(newcomer!, 30)).toEqual(["finished"])
  })

  it("frees the bytes of a released file, once", () => {
    const budget = new SpillBudget(100)
    const [first, second] = ["first", "second"].map((path) => budget.open(path))
    expect(budget.reserve(first!, 100)).toEqual([])
    budget.release(first!)
    budget.release(first!)
    budget.finish(first!)
    expect(budget.reserve(second!, 100)).toEqual([])
    expect(budget.reserve(second!, 1)).toBeUndefined()
  })
})
