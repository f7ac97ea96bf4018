/**
 * One open terminal: its PTY's output pumped into a bounded scrollback, sends that wait for
 * readiness, and close. Readiness, in order of trust, polled on the Clock:
 * - the private prompt marker, followed by exactly the controlled prompt, with the shell's own group
 *   in the foreground again (`stdin_read`);
 * - the foreground group asleep reading the terminal, once past the probe delay — a wait that was
 *   already there before the write counts only after the group was seen out of it (`stdin_read`).
 *   The shell's own wait counts only while no other group held the foreground during the send (a
 *   builtin's `read -p`, a line without Enter): after a job, the shell prints the marker and its
 *   prompt after the job's output and before it reads, so its wait may be seen ahead of both, and
 *   only the marker settles the send as `stdin_read`;
 * - no output for the silence bound, longer when a marker was seen, so a late hand-back of the
 *   foreground to the shell can still win (`inferred_idle`);
 * - the absolute timeout (`timeout`), or the shell's exit (`session_exit`).
 * While output is on its way from the PTY (in the inbox, or in the kernel while the PTY is not
 * read), no tier but the last two settles: the output is not all in, and its writer is not silent.
 * Output the kernel holds while the PTY is read is the spawner's to bring in: after each look at
 * the foreground the PTY's reader has its turn (`PtySpawner.Pty.catchUp`), so output the PTY had
 * ready then is in the inbox by the time a wait and the silence are judged.
 *
 * @internal
 */
import * as Clock from "effect/Clock"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import type { PtySpawner } from "../../../services/PtySpawner.js"
import type { Terminals } from "../../../services/Terminals.js"
import { BoundedText } from "./boundedText.js"
import type { PtyEvent, PtyInbox } from "./ptyInbox.js"
import { PromptMarker, ScreenScanner } from "./screenScanner.js"
import { controlledPrompt } from "./shellSetup.js"
import type { Transcript } from "./transcript.js"

/** The numbers a terminal runs by (see `TerminalsLive.Settings`). */
export interface SessionConfig {
  readonly scrollbackLines: number
  readonly scrollbackMaxBytes: number
  readonly maxReadBytes: number
  readonly pollIntervalMs: number
  readonly exactProbeAfterMs: number
  readonly idleSilenceMs: number
  readonly handoffGraceMs: number
  readonly timeoutMs: number
  readonly startupTimeoutMs: number
  readonly closeGraceMs: number
  readonly killWaitMs: number
}

interface ActiveSend {
  readonly startedAt: number
  /** Everything since the write: the send's result. */
  readonly output: BoundedText
  /** What a background reader has not read yet. */
  readonly unread: BoundedText
  initialPgid: number | undefined
  initialWakeups: number
  initialLeftWait: boolean
  /** Another group than the shell's held the foreground since the write (or at it). */
  jobRan: boolean
}

/** A send under way: its wait for readiness, and a consuming read of its output so far. */
export interface Begun {
  readonly wait: Effect.Effect<Terminals.SendResult>
  readonly read: Effect.Effect<Terminals.OutputRead>
}

/** A prompt tail that can no longer be the controlled prompt. */
const mismatch = `${controlledPrompt}\u0000`

export class TerminalSession {
  readonly scanner = new ScreenScanner()
  readonly scrollback: BoundedText
  status: Terminals.Status = { kind: "running" }
  readonly exited: Deferred.Deferred<void>
  active: ActiveSend | undefined
  closing: Deferred.Deferred<void> | undefined
  lastOutputAt = 0
  private promptSeen = false
  private promptTail = ""
  private initializing = false

  constructor(
    readonly id: string,
    readonly name: string | undefined,
    readonly type: string,
    readonly owner: string | undefined,
    readonly pty: PtySpawner.Pty,
    readonly config: SessionConfig,
    exited: Deferred.Deferred<void>,
    readonly transcript: Transcript,
    readonly inbox: PtyInbox
  ) {
    this.scrollback = new BoundedText(config.scrollbackMaxBytes, config.scrollbackLines)
    this.exited = exited
  }

  snapshot(): Terminals.Snapshot {
    return { id: this.id, name: this.name, type: this.type, pid: this.pty.pid, owner: this.owner, status: this.status }
  }

  private resetEvidence(now: number): void {
    this.lastOutputAt = now
    this.promptSeen = false
    this.promptTail = ""
  }

  private get promptReady(): boolean {
    return this.promptSeen && this.promptTail === controlledPrompt
  }

  /** Keeps `text`; returns the transcript's work, to finish before the next event. */
  private append(text: string): Effect.Effect<void> | undefined {
    if (text.length === 0) return undefined
    const spill = this.transcript.feed(text, !this.scrollback.fits(text), () => this.scrollback.text)
    this.scrollback.append(text)
    this.active?.output.append(text)
    this.active?.unread.append(text)
    return spill
  }

  /** Takes one PTY event; runs in the pump fiber only. */
  readonly take = (event: PtyEvent): Effect.Effect<void> =>
    Effect.flatMap(Clock.currentTimeMillis, (now) => {
      if (event._tag === "exit") {
        const spill = this.append(this.scanner.flush()) ?? Effect.void
        if (this.status.kind === "running") this.status = { kind: "exited", ...event.exit }
        return Effect.zipRight(spill, Deferred.done(this.exited, Exit.void))
      }
      const scanned = this.scanner.push(event.chunk)
      this.lastOutputAt = now
      const spill = this.append(scanned.kept)
      for (const piece of scanned.pieces) {
        if (piece === PromptMarker) {
          this.promptSeen = true
          this.promptTail = ""
        } else if (this.promptSeen && this.promptTail !== mismatch) {
          const tail = this.promptTail + piece
          this.promptTail = tail.length > controlledPrompt.length ? mismatch : tail
        }
      }
      return spill ?? Effect.void
    })

  /** The pump: PTY events in order, for the terminal's lifetime. */
  pump(): Effect.Effect<never> {
    return Effect.forever(
      Effect.flatMap(this.inbox.take, (event) => Effect.zipRight(this.take(event), this.inbox.settle(event)))
    )
  }

  /** Whether the send may start now; the message otherwise. */
  refusal(): string | undefined {
    if (this.closing !== undefined) return `PTY session ${this.id} is closing`
    if (this.status.kind === "exited") return "PTY session has exited"
    if (this.active !== undefined) return `PTY session ${this.id} already has an active send`
    return undefined
  }

  /**
   * Claims the terminal for a send (the caller checked {@link refusal}), writes the input and
   * returns the wait for readiness; the terminal is free again when the wait ends, however it ends.
   */
  begin(input: Terminals.Input, startup = false): Effect.Effect<Begun> {
    return Effect.gen(this, function*() {
      const now = yield* Clock.currentTimeMillis
      const send: ActiveSend = {
        startedAt: now,
        output: new BoundedText(this.config.maxReadBytes),
        unread: new BoundedText(this.config.maxReadBytes),
        initialPgid: undefined,
        initialWakeups: -1,
        initialLeftWait: true,
        jobRan: false
      }
      this.active = send
      this.initializing = startup
      // A shell may print its first prompt before this runs: at startup, all it printed counts.
      if (startup) send.output.append(this.scrollback.text)
      else this.resetEvidence(now)
      const foreground = yield* this.pty.foreground
      send.initialPgid = foreground?.pgid
      send.initialLeftWait = foreground?.readingInput !== true
      send.initialWakeups = foreground?.wakeups ?? -1
      this.noteJob(send, foreground)
      const data = `${input.text}${input.submit === false ? "" : "\r"}`
      if (data.length > 0) {
        // Evidence from before the write says nothing about what the input does.
        this.resetEvidence(yield* Clock.currentTimeMillis)
        yield* this.pty.write(data)
      }
      const wait = this.awaitReady(send, startup ? this.config.startupTimeoutMs : this.config.timeoutMs).pipe(
        Effect.flatMap((reason) => Effect.as(this.transcript.settled, reason)),
        Effect.map((reason) => this.result(send, reason)),
        Effect.ensuring(Effect.sync(() => {
          if (this.active === send) this.active = undefined
          this.initializing = false
        }))
      )
      return {
        wait,
        read: Effect.zipRight(
          this.transcript.settled,
          Effect.sync(() => {
            const { text, truncated } = send.unread.consume()
            return this.withTranscript({ output: text, truncated })
          })
        )
      }
    })
  }

  private result(send: ActiveSend, wait: Terminals.WaitReason): Terminals.SendResult {
    return this.withTranscript({
      output: send.output.text,
      wait,
      status: this.status,
      truncated: send.output.dropped,
      screen: this.scanner.alternate ? "alternate" : "normal"
    })
  }

  /** `value` with the transcript's path, when the text was cut and the transcript is on disk. */
  private withTranscript<A extends { readonly truncated: boolean }>(value: A): A & { readonly transcriptPath?: string } {
    const path = this.transcript.path
    return value.truncated && path !== undefined ? { ...value, transcriptPath: path } : value
  }

  /** Marks the send when another group than the shell's holds the foreground (a job runs). */
  private noteJob(send: ActiveSend, foreground: PtySpawner.Foreground | undefined): void {
    if (foreground !== undefined && foreground.pgid !== this.pty.pid) send.jobRan = true
  }

  /**
   * A foreground group's input wait, unless it is the very wait the send found: the same group
   * counts once it was seen out of its wait, or has woken up since (the input reached it). The
   * shell's own wait after a job is its prompt's: only the marker says that prompt is in.
   */
  private acceptsInputWait(send: ActiveSend, foreground: PtySpawner.Foreground): boolean {
    if (foreground.pgid === this.pty.pid && send.jobRan) return false
    if (foreground.pgid !== send.initialPgid) return foreground.readingInput
    if (!foreground.readingInput || foreground.wakeups !== send.initialWakeups) send.initialLeftWait = true
    return foreground.readingInput && send.initialLeftWait
  }

  /** What settled the send, or how long until the next look (ms). */
  private poll(send: ActiveSend): Effect.Effect<Terminals.WaitReason | number> {
    return Effect.gen(this, function*() {
      if (this.status.kind === "exited") return "session_exit"
      const foreground = yield* this.pty.foreground
      this.noteJob(send, foreground)
      if (this.pty.catchUp !== undefined) yield* this.pty.catchUp
      const now = yield* Clock.currentTimeMillis
      const idle = this.inbox.pending ? 0 : now - this.lastOutputAt
      const interval = this.config.pollIntervalMs
      if (this.promptReady && foreground?.pgid === this.pty.pid) {
        if (idle >= interval) return "stdin_read"
        // The prompt is there: look again as soon as it has been quiet for a poll, not a poll later.
        return interval - idle
      }
      // While the shell starts, only its output (the prompt) can say it is ready. A wait counts once
      // the output has paused for a poll, so what the program printed before it is in the result.
      const hasOutput = !this.initializing || !this.scrollback.isEmpty
      if (
        hasOutput && foreground !== undefined && now - send.startedAt >= this.config.exactProbeAfterMs &&
        this.acceptsInputWait(send, foreground) && idle >= this.config.pollIntervalMs
      ) return "stdin_read"
      const grace = this.promptSeen ? this.config.handoffGraceMs : 0
      if (hasOutput && idle >= this.config.idleSilenceMs + grace) return "inferred_idle"
      return interval
    })
  }

  private awaitReady(send: ActiveSend, timeoutMs: number): Effect.Effect<Terminals.WaitReason> {
    const pollAfter = (ms: number): Effect.Effect<Terminals.WaitReason> =>
      Effect.flatMap(
        Effect.zipRight(Effect.sleep(Duration.millis(ms)), this.poll(send)),
        (wait) => typeof wait === "number" ? pollAfter(wait) : Effect.succeed(wait)
      )
    const polling = pollAfter(this.config.pollIntervalMs)
    const exit = Effect.as(Deferred.await(this.exited), "session_exit" as const)
    return Effect.raceFirst(polling, exit).pipe(
      Effect.timeoutTo({
        duration: Duration.millis(timeoutMs),
        onTimeout: () => "timeout" as const,
        onSuccess: (wait) => wait
      })
    )
  }

  /** SIGINT to the foreground group: how a cancelled send stops what it started. */
  interrupt(): Effect.Effect<void> {
    return Effect.flatMap(this.pty.foreground, (foreground) =>
      foreground === undefined ? Effect.void : Effect.asVoid(this.pty.signalGroup(foreground.pgid, "SIGINT")))
  }

  /** A page of the scrollback, `offset` lines back from the newest. */
  page(offset: number, count: number): Effect.Effect<Terminals.Page> {
    return Effect.zipRight(this.transcript.settled, Effect.sync(() => this.pageNow(offset, count)))
  }

  private pageNow(offset: number, count: number): Terminals.Page {
    const text = this.scrollback.text
    const lines = text.split("\n")
    const totalLines = text.length === 0 ? 0 : lines.length
    if (offset >= totalLines) {
      return this.withTranscript({
        text: "",
        totalLines,
        lineBegin: offset,
        lineEnd: offset,
        truncated: this.scrollback.dropped
      })
    }
    const end = totalLines - offset
    const bounded = new BoundedText(this.config.maxReadBytes)
    bounded.append(lines.slice(Math.max(0, end - count), end).join("\n"))
    const pageText = bounded.text
    const returned = pageText.length === 0 ? 0 : pageText.split("\n").length
    return this.withTranscript({
      text: pageText,
      totalLines,
      lineBegin: offset,
      lineEnd: offset + returned,
      truncated: this.scrollback.dropped || bounded.dropped
    })
  }

  /**
   * TERM to every process of the terminal; a hangup to its shell (an interactive bash ignores TERM)
   * once the others are gone, or at the grace: under a runner with its own PID namespace
   * (bubblewrap), the shell's exit ends every process in it at once, before they could handle the
   * TERM. Then KILL at the grace, and a bounded wait until none is alive. Clock-driven.
   */
  terminate(): Effect.Effect<number> {
    const interval = Duration.millis(this.config.pollIntervalMs)
    const untilNone = (count: Effect.Effect<number>): Effect.Effect<void> =>
      Effect.flatMap(count, (alive) => alive === 0 ? Effect.void : Effect.zipRight(Effect.sleep(interval), untilNone(count)))
    const within = (count: Effect.Effect<number>, ms: number) =>
      // Interruptible: close runs uninterruptibly, and the timeout must be able to stop the poll.
      Effect.timeoutTo(Effect.interruptible(untilNone(count)), {
        duration: Duration.millis(ms),
        onTimeout: () => false,
        onSuccess: () => true
      })
    return Effect.gen(this, function*() {
      const start = yield* Clock.currentTimeMillis
      yield* this.pty.signalAll("SIGTERM")
      yield* within(this.pty.othersAlive, this.config.closeGraceMs)
      yield* this.pty.signalGroup(this.pty.pid, "SIGHUP")
      const left = this.config.closeGraceMs - ((yield* Clock.currentTimeMillis) - start)
      if (!(yield* within(this.pty.alive, Math.max(0, left)))) {
        yield* this.pty.signalAll("SIGKILL")
        yield* within(this.pty.alive, this.config.killWaitMs)
      }
      return yield* this.pty.alive
    })
  }
}
