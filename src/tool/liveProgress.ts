/**
 * Progress of a running `bash` call: its live output as complete lines cleaned like model text
 * (escape sequences removed, carriage-return progress folded), coalesced into at most one update per
 * interval on the Clock, and a last update when the output ends.
 */
import type * as Duration from "effect/Duration"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Queue from "effect/Queue"
import * as Stream from "effect/Stream"
import type { AgentTools } from "../services/AgentTools.js"
import type { BashExecutor } from "../services/BashExecutor.js"
import { modelText } from "./modelText.js"

/**
 * The default spacing of progress updates.
 *
 * @since 0.1.0
 */
const progressInterval: Duration.DurationInput = "100 millis"

/**
 * Shown where live output was skipped because the reader fell behind (the final result still has it).
 *
 * @since 0.1.0
 */
const progressSkippedText = "[live output skipped]\n"

// A line longer than this is shown in pieces; an update longer than this keeps its tail.
const maxLine = 4096
const maxPending = 65_536

/** Turns chunks into cleaned complete lines, one partial line held per stream. */
class ProgressLines {
  private readonly decoders = { stdout: new TextDecoder(), stderr: new TextDecoder() }
  private readonly partial = { stdout: "", stderr: "" }
  // After a skip, a line may begin inside an escape sequence.
  private cut = false

  push(item: BashExecutor.LiveOutput): string {
    if (item._tag === "OutputDropped") {
      this.partial.stdout = ""
      this.partial.stderr = ""
      this.cut = true
      return progressSkippedText
    }
    const text = this.partial[item.stream] + this.decoders[item.stream].decode(item.bytes, { stream: true })
    const end = text.lastIndexOf("\n") + 1
    if (end === 0 && text.length <= maxLine) {
      this.partial[item.stream] = text
      return ""
    }
    const complete = end === 0 ? text : text.slice(0, end)
    this.partial[item.stream] = end === 0 ? "" : text.slice(end)
    return this.clean(complete)
  }

  /** The lines still being written when the output ended. */
  flush(): string {
    const rest = (stream: "stdout" | "stderr") => this.partial[stream] + this.decoders[stream].decode()
    const text = [rest("stdout"), rest("stderr")].filter((part) => part !== "").map((part) => `${part}\n`).join("")
    return text === "" ? "" : this.clean(text)
  }

  private clean(text: string): string {
    const cleaned = modelText(text, this.cut)
    this.cut = false
    return cleaned
  }
}

/**
 * Reports `output` to `onProgress` until the stream ends: an update as soon as there is new text, then
 * at most one per `interval`, coalescing what arrived meanwhile; a last one with what is left at the
 * end, without waiting for the interval. Reading never waits for the callback: text that piles up
 * meanwhile keeps its latest part. It completes after the last update has been delivered.
 *
 * @since 0.1.0
 */
export const reportProgress = (
  output: Stream.Stream<BashExecutor.LiveOutput>,
  onProgress: AgentTools.ProgressCallback,
  interval: Duration.DurationInput = progressInterval
): Effect.Effect<void> =>
  Effect.gen(function*() {
    const lines = new ProgressLines()
    const wake = yield* Queue.sliding<void>(1)
    let pending = ""
    const add = (text: string) => {
      if (text === "") return false
      pending += text
      if (pending.length > maxPending) {
        const tail = pending.slice(-maxPending)
        const lineStart = tail.indexOf("\n") + 1
        pending = progressSkippedText + (lineStart > 0 ? tail.slice(lineStart) : tail)
      }
      return true
    }
    const take = () => {
      const text = pending
      pending = ""
      return text
    }
    // The emitter ends once the output has and nothing is left; the wait after an update is cut
    // short at the end, so the last update never waits for the interval. An update in flight is never
    // cut short by the end, only by interruption (a cancelled call, a closing host).
    const finished = yield* Deferred.make<void>()
    const emitter = yield* Effect.fork(Effect.gen(function*() {
      while (true) {
        yield* Queue.take(wake)
        const text = take()
        if (text !== "") {
          yield* onProgress(text)
          yield* Effect.raceFirst(Effect.sleep(interval), Deferred.await(finished))
        }
        if (pending === "" && (yield* Deferred.isDone(finished))) return
      }
    }))
    yield* Stream.runForEach(output, (item) => add(lines.push(item)) ? Queue.offer(wake, undefined) : Effect.void)
    add(lines.flush())
    yield* Deferred.succeed(finished, undefined)
    yield* Queue.offer(wake, undefined)
    yield* Fiber.join(emitter)
  })
