/**
 * A terminal's PTY in a session's box: an engine exec with a TTY (the engine's, so the shell leads
 * its own session on it), as the box's user, in the terminal's directory, with the call's
 * environment over the box's own. Its size is set through the engine; its output is the exec's
 * stream; what the terminal runtime asks of `/proc` (the foreground group, its stdin wait, the
 * terminal's processes) and its signals go through a probe in the box (`terminalProbe.ts`). Nothing
 * of the host is used, so an engine on another machine works the same.
 *
 * @internal
 */
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import { StringDecoder } from "node:string_decoder"
import type { ContainerEngine } from "../../../services/ContainerEngine.js"
import type { PtySpawner } from "../../../services/PtySpawner.js"
import { PtySpawnError } from "../../../services/PtySpawner.js"
import type { Boxes } from "./Boxes.js"
import { keepTerminalProbe, makeTerminalProbe } from "./terminalProbe.js"

/** The lines the launcher prints before the shell: its pid in the box (or that the directory is missing), then `go`. */
const startMarker = "effect-bash-terminal-start"

/**
 * Enters the directory, says the shell's pid, waits for a line (the host sizes the TTY meanwhile: a
 * shell that starts before would redraw its prompt when the size changes), says `go` (after the
 * TTY's echo of that line) and becomes the shell: `$1` the directory, then the argv. `sh`, which
 * reads no startup file of the caller's environment (bash reads `BASH_ENV`).
 */
const launcher = `cd -- "$1" 2>/dev/null || { printf '${startMarker} nowd\\n'; exit 126; }; ` +
  `printf '${startMarker} %s\\n' "$$"; read -r _; printf '${startMarker} go\\n'; shift; exec "$@"`

/** How long the shell may take to start, and the probe to answer one request. */
const startMs = 30_000
const probeAnswerMs = 10_000
/** How long after the stream's end the engine may take to record the exit code. */
const exitCodeMs = 2_000
const exitCodePollMs = 50

export interface BoxTerminalsOptions {
  readonly engine: ContainerEngine.Service
  /** The executor's boxes: a terminal holds its session's while it is open. */
  readonly boxes: Pick<Boxes, "acquire" | "release">
}

const failure = (message: string, cause?: unknown) => new PtySpawnError({ message, ...(cause === undefined ? {} : { cause }) })

/** Reads the TTY until the launcher's line after `seen`: what it says, and the output after it. */
const readStart = (exec: ContainerEngine.ExecSession, seen: Buffer) =>
  Effect.gen(function*() {
    for (;;) {
      const at = seen.indexOf(startMarker)
      const end = at === -1 ? -1 : seen.indexOf(10, at)
      if (end !== -1) {
        return {
          said: seen.subarray(at + startMarker.length + 1, end).toString("latin1").trim(),
          rest: seen.subarray(end + 1),
          before: seen.subarray(0, at).toString("utf8").trim()
        }
      }
      const frame = yield* exec.next
      if (frame === undefined) return { said: undefined, rest: Buffer.alloc(0), before: seen.toString("utf8").trim() }
      seen = Buffer.concat([seen, frame.bytes])
    }
  })

/** The exec's exit code once the engine has recorded it (bounded); `null` when it did not say. */
const exitCodeOf = (exec: ContainerEngine.ExecSession): Effect.Effect<number | null> => {
  const look: Effect.Effect<number> = Effect.flatMap(
    Effect.orElseSucceed(exec.exitCode, () => undefined),
    (code) => code === undefined ? Effect.zipRight(Effect.sleep(Duration.millis(exitCodePollMs)), look) : Effect.succeed(code)
  )
  return Effect.timeoutTo(look, { duration: Duration.millis(exitCodeMs), onTimeout: () => null, onSuccess: (code) => code })
}

/** Starts terminals' shells in the boxes of `options.boxes`. */
export const makeBoxTerminals = (deps: BoxTerminalsOptions) =>
(options: PtySpawner.Options): Effect.Effect<PtySpawner.Pty, PtySpawnError, Scope.Scope> =>
  Effect.gen(function*() {
    const { boxes, engine } = deps
    // The box of the session the terminal's environment names, as a call's (held while it is open).
    const box = yield* Effect.acquireRelease(
      Effect.mapError(boxes.acquire(options.env.DSH_SESSION_ID ?? ""), (error) =>
        failure(
          error._tag === "WorkspaceMissing"
            ? `the directory the containers mount does not exist: ${error.path}`
            : `the terminal's container could not be started: ${error.message}`,
          error
        )),
      (box) => boxes.release(box)
    )
    const short = box.id.slice(0, 12)
    const exec = yield* Effect.acquireRelease(
      Effect.mapError(
        engine.exec(box.id, {
          argv: ["/bin/sh", "-c", launcher, "effect-bash-terminal", options.cwd, options.file, ...options.args],
          env: options.env,
          stdin: true,
          tty: true
        }),
        (error) => failure(`the terminal's shell could not be started in container ${short}: ${error.message}`, error)
      ),
      (exec) => exec.close
    )
    const started = (seen: Buffer) =>
      readStart(exec, seen).pipe(
        Effect.interruptible,
        Effect.timeoutFail({
          duration: Duration.millis(startMs),
          onTimeout: () => failure(`the terminal's shell did not start within ${startMs} ms in container ${short}`)
        })
      )
    const start = yield* started(Buffer.alloc(0))
    if (start.said === "nowd") return yield* failure(`working directory ${options.cwd} does not exist or is not a directory`)
    const pid = Number(start.said)
    if (start.said === undefined || !Number.isSafeInteger(pid) || pid <= 0) {
      return yield* failure(
        `the terminal's shell did not start in container ${short}${start.before === "" ? "" : `: ${start.before}`}`
      )
    }
    if (exec.resize !== undefined) {
      yield* exec.resize(options.rows, options.cols).pipe(
        Effect.catchAll((error) => Effect.logWarning(`could not size the terminal in container ${short}`, error.message))
      )
    }
    yield* exec.write(Buffer.from("\n"))
    const go = yield* started(start.rest)
    if (go.said !== "go") {
      return yield* failure(`the terminal's shell did not start in container ${short}${go.before === "" ? "" : `: ${go.before}`}`)
    }
    // Released before the exec closes: whatever of the terminal is left is killed in the box, then the probe exits.
    const probe = yield* Effect.mapError(
      keepTerminalProbe(makeTerminalProbe(engine, box.id, pid, probeAnswerMs)),
      (error) => failure(`the terminal's probe could not be started in container ${short}: ${error.message}`, error)
    )

    // The TTY's output, decoded, to the receiver, at its pace: a receiver that holds all it will stops
    // the reads until `resume`, and the engine's stream (then the TTY) fills.
    const flowing = yield* Effect.makeLatch(true)
    const decoder = new StringDecoder("utf8")
    // Closed in the same step as the refusal: a `resume` that comes before the next read then opens it.
    const deliver = (text: string) =>
      Effect.sync(() => {
        if (text.length > 0 && !options.onData(text)) flowing.unsafeClose()
      })
    const pump = Effect.gen(function*() {
      yield* deliver(decoder.write(go.rest))
      for (;;) {
        yield* flowing.await
        const frame = yield* exec.next
        if (frame === undefined) break
        yield* deliver(decoder.write(Buffer.from(frame.bytes)))
      }
      const last = decoder.end()
      if (last.length > 0) options.onData(last)
      const exitCode = yield* exitCodeOf(exec)
      options.onExit({ exitCode, signal: null })
    })
    yield* Effect.forkScoped(Effect.interruptible(pump))

    // A count no probe could give: unknown, so nothing is taken for gone but in a box that is gone or
    // once the release has killed what was left (the terminal's scope may close before its close).
    const count = (request: string) =>
      Effect.map(probe.ask(request), (fields) => {
        const n = Number(fields?.[0])
        return Number.isSafeInteger(n) ? n : box.gone || probe.released() ? 0 : 1
      })
    const pty: PtySpawner.Pty = {
      pid,
      write: (data) => exec.write(Buffer.from(data, "utf8")),
      resume: flowing.open,
      foreground: Effect.map(probe.ask("fg"), (fields) => {
        const [pgid, reading, wakeups] = (fields ?? []).map(Number)
        return pgid === undefined || !(pgid > 0) ? undefined : { pgid, readingInput: reading === 1, wakeups: wakeups ?? -1 }
      }),
      signalGroup: (pgid, signal) => Effect.map(probe.ask(`group ${signal} ${pgid}`), (fields) => fields?.[0] === "ok"),
      signalAll: (signal) => count(`all ${signal}`),
      alive: count("alive"),
      othersAlive: count("others")
    }
    yield* Effect.annotateCurrentSpan({ "terminal.box": short, "terminal.pid": pid })
    return pty
  }).pipe(Effect.withSpan("BoxTerminals.spawn"))
