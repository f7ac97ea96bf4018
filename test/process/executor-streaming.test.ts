/**
 * Live output of the local executor, against real processes: chunks arrive while the command runs,
 * `run`'s result is unchanged, and a consumer that never reads cannot make memory grow.
 */
import { describe, expect, it } from "@effect/vitest"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { Chunk, Effect, Exit, Fiber, Option, Scope, Stream } from "effect"
import * as LocalBashExecutor from "../../src/layers/LocalBashExecutor.js"
import { BashExecutor, liveOutputBufferBytes } from "../../src/services/BashExecutor.js"
import { firstPid, liveMembers } from "../support/processes.js"

const executor = LocalBashExecutor.layer({ graceMs: 300 })
const decoder = new TextDecoder()

const textOf = (items: Iterable<BashExecutor.LiveOutput>, stream: "stdout" | "stderr") =>
  [...items].filter((item): item is BashExecutor.OutputChunk => item._tag === "OutputChunk" && item.stream === stream)
    .map((item) => decoder.decode(item.bytes)).join("")

/** A command that prints `before`, then waits until the test creates `go` (no timing involved). */
const gated = (dir: string) =>
  `echo before; echo oops >&2; while [ ! -e '${dir}/go' ]; do sleep 0.01; done; echo after`

const tempDir = Effect.acquireRelease(
  Effect.sync(() => fs.mkdtempSync(path.join(os.tmpdir(), "effect-bash-live-"))),
  (dir) => Effect.sync(() => fs.rmSync(dir, { recursive: true, force: true }))
)

describe("live output", () => {
  // The tool's watched run starts runStreaming in an acquire (interruption off): the run must still
  // be interruptible, or closing the scope waits for the command to end instead of killing it.
  it.live("started where interruption is off, closing its scope kills the group at once", () =>
    Effect.gen(function*() {
      const bash = yield* BashExecutor
      const spec = yield* bash.resolve({ command: "echo $$; sleep 30 & wait", timeoutMs: 60_000 })
      const scope = yield* Scope.make()
      const live = yield* Effect.uninterruptible(Scope.extend(bash.runStreaming(spec), scope))
      const first = yield* Stream.runHead(live.output)
      const shell = firstPid(Option.match(first, { onNone: () => "", onSome: (item) => textOf([item], "stdout") }))
      expect(liveMembers(shell).length).toBeGreaterThan(0)
      // Bounded: a run that ignored the interrupt would hold the close for the command's 30 s.
      const closed = yield* Effect.timeoutOption(Scope.close(scope, Exit.void), "5 seconds")
      expect(Option.isSome(closed), "the scope closed within the bound").toBe(true)
      expect(liveMembers(shell)).toEqual([])
    }).pipe(Effect.provide(executor)))

  it.live("a foreground run's chunks arrive in order while it runs; the result is run's", () =>
    Effect.scoped(Effect.gen(function*() {
      const dir = yield* tempDir
      const bash = yield* BashExecutor
      const live = yield* bash.runStreaming(yield* bash.resolve({ command: gated(dir) }))
      const resultFiber = yield* Effect.fork(live.result)
      const seen: Array<BashExecutor.LiveOutput> = []
      let stillRunningAtFirstChunk: boolean | undefined
      yield* Stream.runForEach(live.output, (item) =>
        Effect.gen(function*() {
          seen.push(item)
          if (stillRunningAtFirstChunk === undefined && textOf(seen, "stdout") === "before\n") {
            // The command cannot finish before `go` exists: this chunk came while it ran.
            stillRunningAtFirstChunk = Option.isNone(yield* Fiber.poll(resultFiber))
            fs.writeFileSync(path.join(dir, "go"), "")
          }
        }))
      const result = yield* Fiber.join(resultFiber)
      expect(stillRunningAtFirstChunk).toBe(true)
      expect(textOf(seen, "stdout")).toBe("before\nafter\n")
      expect(textOf(seen, "stderr")).toBe("oops\n")
      expect(result).toMatchObject({
        exitCode: 0,
        timedOut: false,
        stdout: { text: "before\nafter\n", truncated: false },
        stderr: { text: "oops\n", truncated: false }
      })
    })).pipe(Effect.provide(executor)))

  it.live("a consumer that never reads: a 1 GiB flood keeps memory bounded and the run returns", () =>
    Effect.scoped(Effect.gen(function*() {
      const bash = yield* BashExecutor
      const before = process.memoryUsage().rss
      const live = yield* bash.runStreaming(
        yield* bash.resolve({ command: "head -c 1G /dev/zero; echo done >&2", timeoutMs: 300_000 })
      )
      const result = yield* live.result
      // Everything the consumer did not read is still queued here: without a bound that is 1 GiB.
      const growth = process.memoryUsage().rss - before
      expect(result).toMatchObject({ exitCode: 0, timedOut: false, stdout: { truncated: true } })
      expect(result.stderr.text).toBe("done\n")
      expect(growth).toBeLessThan(256 * 1024 * 1024)
      // What was kept plus what the lossy marks count is the whole output.
      const items = Chunk.toReadonlyArray(yield* Stream.runCollect(live.output))
      let kept = 0
      let dropped = 0
      for (const item of items) {
        if (item._tag === "OutputChunk") kept += item.bytes.length
        else dropped += item.stdoutBytes + item.stderrBytes
      }
      expect(kept).toBeLessThanOrEqual(liveOutputBufferBytes)
      expect(kept + dropped).toBe(1024 ** 3 + "done\n".length)
      expect(items.map((item) => item._tag)).toContain("OutputDropped")
    })).pipe(Effect.provide(executor)), 120_000)

  it.live("a background process's output streams without consuming its reads", () =>
    Effect.scoped(Effect.gen(function*() {
      const dir = yield* tempDir
      const bash = yield* BashExecutor
      const proc = yield* bash.start(yield* bash.resolve({ command: gated(dir) }))
      const streamed: Array<BashExecutor.LiveOutput> = []
      // Subscribing is proved by the first chunk; only then may the command go on.
      const ticking = `while [ ! -e '${dir}/go' ]; do echo tick; sleep 0.05; done; echo after`
      const ticker = yield* bash.start(yield* bash.resolve({ command: ticking }))
      yield* Stream.runForEach(ticker.output, (item) =>
        Effect.sync(() => {
          streamed.push(item)
          fs.writeFileSync(path.join(dir, "go"), "")
        }))
      const streamedText = textOf(streamed, "stdout")
      expect(streamedText).toMatch(/after\n$/)
      const read = yield* ticker.readOutput
      expect(read.delta.slice(-streamedText.length), "the read ends with what was streamed").toBe(streamedText)
      expect(read.delta).toMatch(/^tick\n/)
      yield* proc.done
      // A stream run after the process settled ends at once.
      expect(Chunk.size(yield* Stream.runCollect(proc.output))).toBe(0)
      expect((yield* proc.readOutput).delta).toBe("before\nafter\n[stderr]\noops\n")
    })).pipe(Effect.provide(executor)))
})
