/**
 * A terminal's whole transcript on disk: once the bounded scrollback drops output, everything the
 * terminal printed goes to a spill file of the layer's store (its budget and per-file cap apply),
 * named where the model reads a cut text; the terminal's close removes it, and the layer's close its
 * directory. A fake PTY and TestClock: no process starts, no real time passes.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Fiber, Layer, TestClock } from "effect"
import * as NodeFs from "node:fs"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"
import * as TasksLive from "../../src/layers/TasksLive.js"
import * as TerminalsLive from "../../src/layers/TerminalsLive.js"
import { Terminals } from "../../src/services/Terminals.js"
import * as FakePtySpawner from "../../src/testing/FakePtySpawner.js"
import * as ScriptedBashExecutor from "../../src/testing/ScriptedBashExecutor.js"
import { composeWith, textOf } from "../support/tools.js"

const owner = "s1"

const lines = (count: number) => Array.from({ length: count }, (_, i) => `line ${i}\r\n`).join("")

/** A shell that answers every line with 50 numbered lines, then its prompt. */
const flooding = () =>
  FakePtySpawner.make({
    onWrite: (pty) => {
      pty.setForeground({ pgid: pty.pid + 1, readingInput: false })
      pty.emit(lines(50))
      pty.prompt()
    }
  })

/** Everything the flooding shell printed after `sends` sends, as the terminal keeps it. */
const transcriptAfter = (sends: number) => `dsh> ${`${lines(50)}dsh> `.repeat(sends)}`

/**
 * Runs `effect` while the Clock moves in steps of 10 ms, `ms` of them or more while it is not done
 * (up to ten times as many). The transcript is written behind the terminal (real file I/O, which
 * holds the PTY's output while it lands), so before each step a real file-system round trip, queued
 * behind those writes in the thread pool, and a turn of the event loop let it land: a poll then never
 * sleeps past a Clock that has already moved.
 */
const within = <A, E, R>(ms: number, effect: Effect.Effect<A, E, R>) =>
  Effect.gen(function*() {
    const fiber = yield* Effect.fork(effect)
    for (let moved = 0; moved < 10 * ms && (moved < ms || fiber.unsafePoll() === null); moved += 10) {
      yield* Effect.promise(() => NodeFs.promises.stat(NodeOs.tmpdir()))
      yield* Effect.promise(() => new Promise<void>((resolve) => setImmediate(resolve)))
      yield* TestClock.adjust(10)
    }
    return yield* Fiber.join(fiber)
  })

/** A fresh spill parent, removed (with anything left in it) when the test's scope closes. */
const spillParent = Effect.acquireRelease(
  Effect.sync(() => NodeFs.mkdtempSync(NodePath.join(NodeOs.tmpdir(), "effect-bash-test-transcript-"))),
  (dir) => Effect.sync(() => NodeFs.rmSync(dir, { recursive: true, force: true }))
)

/**
 * The file's text once it holds `expected`'s length: the file is written behind the terminal, so
 * each look is a real read that lets pending writes land (bounded, never a sleep).
 */
const fileText = (path: string, expected: string) =>
  Effect.gen(function*() {
    let text = ""
    for (let look = 0; look < 500 && text.length < expected.length; look++) {
      text = yield* Effect.promise(() => NodeFs.promises.readFile(path, "utf8"))
    }
    return text
  })

/**
 * The files under `dir` once they are `expected`: a dropped transcript is removed behind the terminal,
 * so each look is a real read that lets pending removals land (bounded, never a sleep).
 */
const filesOnceThey = (dir: string, expected: ReadonlyArray<string | undefined>) =>
  Effect.gen(function*() {
    let files = filesUnder(dir)
    for (let look = 0; look < 500 && JSON.stringify(files) !== JSON.stringify(expected); look++) {
      yield* Effect.promise(() => NodeFs.promises.readdir(dir, { recursive: true }))
      files = filesUnder(dir)
    }
    return files
  })

const filesUnder = (dir: string): Array<string> =>
  NodeFs.readdirSync(dir, { recursive: true, withFileTypes: true }).filter((entry) => entry.isFile()).map((entry) =>
    NodePath.join(entry.parentPath, entry.name)
  )

describe("a terminal's transcript", () => {
  it.scoped("once the scrollback drops output, the whole of it is in a file the cut results name; close removes it", () =>
    Effect.gen(function*() {
      const parent = yield* spillParent
      yield* Effect.scoped(Effect.gen(function*() {
        const terminals = yield* Terminals
        const { id } = yield* within(100, terminals.open(owner, { type: "shell" }))
        // Nothing is written while the scrollback holds everything.
        expect(filesUnder(parent)).toEqual([])
        const first = yield* within(200, terminals.send(owner, id, { text: "seq" }))
        const second = yield* within(200, terminals.send(owner, id, { text: "seq" }))
        expect(first.truncated).toBe(true)
        const path = second.transcriptPath!
        expect(first.transcriptPath).toBe(path)
        expect(NodePath.dirname(NodePath.dirname(path))).toBe(parent)
        expect(NodePath.basename(path)).toMatch(new RegExp(`^${id}-[0-9a-f-]+\\.log$`))
        expect(NodeFs.statSync(path).mode & 0o777).toBe(0o600)
        // Only the newest 20 lines are kept in memory; the file has all of them, from the first prompt on.
        const page = yield* terminals.read(owner, id, { count: 1_000 })
        expect(page).toMatchObject({ totalLines: 20, truncated: true, transcriptPath: path })
        expect(yield* fileText(path, transcriptAfter(2))).toBe(transcriptAfter(2))
        expect(yield* within(100, terminals.close(owner, id))).toBe("closed")
        expect(NodeFs.existsSync(path)).toBe(false)
        expect(NodeFs.readdirSync(parent)).toHaveLength(1)
      }).pipe(
        Effect.provide(
          TerminalsLive.layer({ spillParent: parent, scrollbackLines: 20, maxReadBytes: 200 }).pipe(
            Layer.provide(flooding().layer)
          )
        )
      ))
      // The layer's close removes its spill directory.
      expect(NodeFs.readdirSync(parent)).toEqual([])
    }))

  it.scoped("a transcript past maxSpillBytes is removed; the cut results then name no file", () =>
    Effect.gen(function*() {
      const parent = yield* spillParent
      yield* Effect.gen(function*() {
        const terminals = yield* Terminals
        const { id } = yield* within(100, terminals.open(owner, { type: "shell" }))
        const first = yield* within(200, terminals.send(owner, id, { text: "seq" }))
        expect(first.transcriptPath).toBeDefined()
        const second = yield* within(200, terminals.send(owner, id, { text: "seq" }))
        expect(second.truncated).toBe(true)
        expect(second.transcriptPath).toBeUndefined()
        expect(yield* filesOnceThey(parent, [])).toEqual([])
      }).pipe(
        Effect.provide(
          TerminalsLive.layer({
            spillParent: parent,
            scrollbackLines: 20,
            maxReadBytes: 200,
            maxSpillBytes: transcriptAfter(1).length
          }).pipe(Layer.provide(flooding().layer))
        )
      )
    }))

  it.scoped("a transcript the layer's spill budget cannot hold beside the others is not written", () =>
    Effect.gen(function*() {
      const parent = yield* spillParent
      yield* Effect.gen(function*() {
        const terminals = yield* Terminals
        const sendTo = (who: string) =>
          Effect.gen(function*() {
            const { id } = yield* within(100, terminals.open(who, { type: "shell" }))
            return yield* within(200, terminals.send(who, id, { text: "seq" }))
          })
        const first = yield* sendTo("s1")
        const second = yield* sendTo("s2")
        expect(first.transcriptPath).toBeDefined()
        expect(second.truncated).toBe(true)
        expect(second.transcriptPath).toBeUndefined()
        expect(yield* filesOnceThey(parent, [first.transcriptPath])).toEqual([first.transcriptPath])
      }).pipe(
        Effect.provide(
          TerminalsLive.layer({
            spillParent: parent,
            scrollbackLines: 20,
            maxReadBytes: 200,
            // One transcript fits; a second one, written at the same time, does not.
            maxSpillTotalBytes: Math.floor(transcriptAfter(1).length * 1.5)
          }).pipe(Layer.provide(flooding().layer))
        )
      )
    }))

  it.scoped("the model reads the transcript's path where its text was cut, as bash names its spill file", () =>
    Effect.gen(function*() {
      const parent = yield* spillParent
      const fake = flooding()
      const layer = composeWith({
        executor: ScriptedBashExecutor.layer(),
        services: Layer.merge(
          TasksLive.layer(),
          TerminalsLive.layer({ spillParent: parent, scrollbackLines: 20, maxReadBytes: 200 }).pipe(
            Layer.provide(fake.layer)
          )
        )
      })
      yield* Effect.gen(function*() {
        const context = { session: { id: owner } }
        yield* within(100, textOf("terminal_open", { type: "shell" }, context))
        const sent = yield* within(200, textOf("terminal_send", { sessionId: "pty-1", text: "seq" }, context))
        const [path] = filesUnder(parent)
        expect(sent).toMatch(/\nline 49\ndsh> \n\[wait: stdin_read\]\n\[session: running\]\n/)
        expect(sent.endsWith(`\n[output truncated; full transcript: ${path}]`)).toBe(true)
        const page = yield* textOf("terminal_read", { sessionId: "pty-1", count: 2 }, context)
        expect(page).toBe(`line 49\ndsh> \n[lines: 0-2 of 20]\n[output truncated; full transcript: ${path}]`)
        // A background send's output read with task_output names it too.
        const started = yield* textOf("terminal_send", { sessionId: "pty-1", text: "seq", run_in_background: true }, context)
        const taskId = /^started background task (\S+)$/.exec(started)![1]
        yield* TestClock.adjust(200)
        const read = yield* textOf("task_output", { task_id: taskId }, context)
        expect(read).toContain(`line 49\ndsh> \n[output truncated; full transcript: ${path}]`)
      }).pipe(Effect.provide(layer))
    }))
})
