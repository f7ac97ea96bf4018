/**
 * The spill budget's rules, without files: what is removed, in which order, what is refused, and
 * that the bound holds on disk while removals are under way.
 */
import { describe, expect, it } from "vitest"
import type { SpillShare } from "../../src/layers/internal/executor/SpillBudget.js"
import { SpillBudget } from "../../src/layers/internal/executor/SpillBudget.js"

/** Files on disk as the store keeps them: a write lands once reserved, a file leaves once removed. */
const disk = (budget: SpillBudget) => {
  const sizes = new Map<string, number>()
  const write = (share: SpillShare, size: number) => {
    const reservation = budget.reserve(share, size)
    if (reservation._tag === "Reserved") sizes.set(share.path, (sizes.get(share.path) ?? 0) + size)
    return reservation
  }
  const remove = (paths: ReadonlyArray<string>) => {
    for (const path of paths) sizes.delete(path)
    budget.gone(paths)
  }
  const used = () => [...sizes.values()].reduce((sum, size) => sum + size, 0)
  return { write, remove, used, files: () => [...sizes.keys()].sort() }
}

describe("SpillBudget", () => {
  it("removes finished files oldest-finished first, and only as much as a newer spill needs", () => {
    const budget = new SpillBudget(100)
    const files = disk(budget)
    const [a, b, c] = ["a", "b", "c"].map((path) => budget.open(path))
    expect(files.write(b!, 30)._tag).toBe("Reserved")
    expect(files.write(a!, 30)._tag).toBe("Reserved")
    // b finishes before a: b is the oldest finished file.
    budget.finish(b!)
    budget.finish(a!)
    expect(files.write(c!, 40)._tag).toBe("Reserved")
    expect(files.write(c!, 10)).toEqual({ _tag: "RemoveFirst", paths: ["b"] })
    expect([a!.state, b!.state]).toEqual(["finished", "removing"])
    files.remove(["b"])
    expect(files.write(c!, 10)._tag).toBe("Reserved")
    expect(files.write(c!, 30)).toEqual({ _tag: "RemoveFirst", paths: ["a"] })
  })

  it("never removes a file still being written: a write that cannot fit is refused and changes nothing", () => {
    const budget = new SpillBudget(100)
    const files = disk(budget)
    const [writing, finished, newcomer] = ["writing", "finished", "newcomer"].map((path) => budget.open(path))
    expect(files.write(writing!, 70)._tag).toBe("Reserved")
    expect(files.write(finished!, 20)._tag).toBe("Reserved")
    budget.finish(finished!)
    // 70 held + 31 > 100 even with the finished file gone: refused, and the finished file stays.
    expect(files.write(newcomer!, 31)._tag).toBe("Refused")
    expect(finished!.state).toBe("finished")
    expect(files.write(newcomer!, 30)).toEqual({ _tag: "RemoveFirst", paths: ["finished"] })
  })

  it("a file counts until it is gone: no write is admitted beside a removal still under way", () => {
    const budget = new SpillBudget(100)
    const files = disk(budget)
    const [old, first, second] = ["old", "first", "second"].map((path) => budget.open(path))
    expect(files.write(old!, 80)._tag).toBe("Reserved")
    budget.finish(old!)
    // Two floods at once: the first decides to remove `old`; before that removal ends, the second
    // may not write, or `old` and both writes would be on disk together.
    expect(files.write(first!, 40)).toEqual({ _tag: "RemoveFirst", paths: ["old"] })
    expect(files.write(second!, 40)).toEqual({ _tag: "RemoveFirst", paths: ["old"] })
    expect(files.used()).toBe(80)
    files.remove(["old"])
    // The second removal of the same file finds it gone: nothing is counted twice.
    files.remove(["old"])
    expect(files.write(first!, 40)._tag).toBe("Reserved")
    expect(files.write(second!, 40)._tag).toBe("Reserved")
    expect(files.write(second!, 21)._tag).toBe("Refused")
    expect({ used: files.used(), files: files.files() }).toEqual({ used: 80, files: ["first", "second"] })
  })

  it("an abandoned file frees its bytes once it is gone, and only once", () => {
    const budget = new SpillBudget(100)
    const files = disk(budget)
    const [first, second] = ["first", "second"].map((path) => budget.open(path))
    expect(files.write(first!, 100)._tag).toBe("Reserved")
    budget.startRemoval(first!)
    expect(files.write(second!, 1)).toEqual({ _tag: "RemoveFirst", paths: ["first"] })
    files.remove(["first"])
    budget.startRemoval(first!)
    files.remove(["first"])
    budget.finish(first!)
    expect(files.write(second!, 100)._tag).toBe("Reserved")
    expect(files.write(second!, 1)._tag).toBe("Refused")
  })
})
