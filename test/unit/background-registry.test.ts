import { describe, expect, it } from "@effect/vitest"
import { Either, Option } from "effect"
import { BackgroundRegistry } from "../../src/layers/internal/BackgroundRegistry.js"

// The one registry behind the executor's background processes and TasksLive's tasks: the rules both
// rely on, proven once here (the executor's and the task runtime's tests prove them again through
// their own seams).
interface Entry {
  readonly id: string
  readonly owner: string | undefined
  running: boolean
}

const registry = (bounds: { readonly maxRunning: number; readonly maxFinished: number }) =>
  new BackgroundRegistry<Entry>({ ...bounds, isRunning: (entry) => entry.running })

const entry = (id: string, owner?: string): Entry => ({ id, owner, running: true })

describe("BackgroundRegistry", () => {
  it("counts ids per kind from 1 and never hands one out twice", () => {
    const ids = registry({ maxRunning: 10, maxFinished: 10 })
    expect([ids.nextId("bash"), ids.nextId("bash"), ids.nextId("proc"), ids.nextId("bash")]).toEqual([
      "bash-1",
      "bash-2",
      "proc-1",
      "bash-3"
    ])
  })

  it("hands an entry only to its owner; an entry with no owner is everyone's", () => {
    const tasks = registry({ maxRunning: 10, maxFinished: 10 })
    tasks.set(entry("bash-1", "alice"))
    tasks.set(entry("bash-2"))
    expect(Either.isRight(tasks.access("bash-1", "alice"))).toBe(true)
    expect(tasks.access("bash-1", "bob")).toEqual(Either.left("foreign"))
    expect(tasks.access("bash-1", undefined)).toEqual(Either.left("foreign"))
    expect(tasks.access("bash-9", "alice")).toEqual(Either.left("unknown"))
    expect(Either.isRight(tasks.access("bash-2", "bob"))).toBe(true)
    expect(tasks.visibleTo("bob").map((e) => e.id)).toEqual(["bash-2"])
    expect(tasks.visibleTo("alice").map((e) => e.id)).toEqual(["bash-1", "bash-2"])
    expect(tasks.ownerOf("bash-1")).toEqual(Option.some("alice"))
    expect(tasks.ownerOf("bash-2")).toEqual(Option.none())
  })

  it("has capacity while fewer than maxRunning entries run", () => {
    const procs = registry({ maxRunning: 2, maxFinished: 10 })
    const first = entry("proc-1")
    procs.set(first)
    expect(procs.hasCapacity).toBe(true)
    procs.set(entry("proc-2"))
    expect(procs.hasCapacity).toBe(false)
    first.running = false
    procs.finish(first.id)
    expect(procs.hasCapacity).toBe(true)
    expect(procs.running.map((e) => e.id)).toEqual(["proc-2"])
  })

  it("keeps at most maxFinished finished entries, evicting the one that finished earliest", () => {
    const procs = registry({ maxRunning: 10, maxFinished: 2 })
    for (const id of ["p-1", "p-2", "p-3", "p-4"]) procs.set(entry(id))
    for (const id of ["p-3", "p-1", "p-4"]) procs.finish(id)
    // p-3 finished first: it goes, although p-1 started earlier; the running p-2 is never evicted.
    expect(procs.get("p-3")).toBeUndefined()
    expect(procs.visibleTo(undefined).map((e) => e.id)).toEqual(["p-1", "p-2", "p-4"])
  })

  it("replaces an entry in its place", () => {
    const tasks = registry({ maxRunning: 10, maxFinished: 10 })
    for (const id of ["t-1", "t-2"]) tasks.set(entry(id))
    tasks.set({ ...entry("t-1", "carol"), running: false })
    expect(tasks.visibleTo("carol").map((e) => [e.id, e.running])).toEqual([["t-1", false], ["t-2", true]])
  })
})
