/**
 * Floods in two terminals of one process at the same time, on real PTYs, with the event loop kept
 * busy: a command's last output can then still wait unread in the kernel when its shell (or the
 * program) already sleeps reading the terminal. Every send's result must end with the command's last
 * line and what came after it (the prompt, the program's question), settled as `stdin_read`.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import * as NodePtySpawner from "../../src/layers/NodePtySpawner.js"
import * as TerminalsLive from "../../src/layers/TerminalsLive.js"
import { Terminals } from "../../src/services/Terminals.js"

const owner = "session-a"
const rounds = 3
const lines = 10_000

/**
 * A host whose event loop is busy, as under other work done in long synchronous stretches (another
 * library's flood in the same process): a timer holds the loop 80 ms at a time, so a poll can run
 * after output reached the kernel but before the loop read it.
 */
const busyLoop = Effect.acquireRelease(
  Effect.sync(() =>
    setInterval(() => {
      const until = performance.now() + 80
      while (performance.now() < until) {
        // Holding the loop.
      }
    }, 20)
  ),
  (timer) => Effect.sync(() => clearInterval(timer))
)

/** What bash prints before its prompt on a terminal: bracketed paste on. */
const bracketedPaste = "(?:\\x1b\\[\\?2004h)?"

const layer = TerminalsLive.layer({ closeGraceMs: 1_000 }).pipe(Layer.provide(NodePtySpawner.layer))

/**
 * Runs `command` in `rounds` rounds, in two terminals at once; the results of every round. After
 * each, `answer` (when given) goes to each terminal on its own, back to the shell's prompt.
 */
const concurrently = (command: string, answer?: string) =>
  Effect.gen(function*() {
    yield* busyLoop
    const terminals = yield* Terminals
    const ids = yield* Effect.forEach([1, 2], () => Effect.map(terminals.open(owner, { type: "shell" }), (t) => t.id))
    const results: Array<{ readonly wait: string; readonly tail: string }> = []
    for (let round = 0; round < rounds; round++) {
      const sent = yield* Effect.forEach(ids, (id) => terminals.send(owner, id, { text: command }), { concurrency: 2 })
      for (const result of sent) results.push({ wait: result.wait, tail: result.output.slice(-40) })
      if (answer !== undefined) {
        for (const id of ids) expect((yield* terminals.send(owner, id, { text: answer })).output).toMatch(/dsh> $/)
      }
    }
    return results
  })

describe("floods in two terminals at once", () => {
  it.live("the shell's own prompt after a flood: every result ends with the last line and the prompt", () =>
    Effect.gen(function*() {
      const results = yield* concurrently(`seq 1 ${lines}`)
      expect(results).toHaveLength(2 * rounds)
      for (const result of results) {
        expect(result).toEqual({ wait: "stdin_read", tail: expect.stringMatching(new RegExp(`\\r\\n${lines}\\r\\n${bracketedPaste}dsh> $`)) })
      }
    }).pipe(Effect.scoped, Effect.provide(layer)), 120_000)

  it.live("a program that floods, then reads the terminal: every result ends with its last line and its question", () =>
    Effect.gen(function*() {
      // `bash -c` is a foreground group of its own: its wait is a program's, not the shell's.
      const results = yield* concurrently(`bash -c 'seq 1 ${lines}; read -p "more? " x'`, "no")
      expect(results).toHaveLength(2 * rounds)
      for (const result of results) {
        expect(result).toEqual({ wait: "stdin_read", tail: expect.stringMatching(new RegExp(`\\r\\n${lines}\\r\\nmore\\? $`)) })
      }
    }).pipe(Effect.scoped, Effect.provide(layer)), 120_000)
})
