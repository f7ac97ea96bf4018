/**
 * A scriptable `ContainerEngine` for deterministic tests of the container executor: no engine, no
 * processes, no real time. It plays an engine running the executor's wrapper: each call's exec (a
 * served one, or one of the call's own) reads the call's key, says its group's pid under the call's
 * token, runs the command once the host says `go`, and once the test ends the command, says the
 * status line, tagged under the key, and the call's `end` on the exec's own streams. A test
 * decides how each command reacts to signals, feeds its output, ends it, and reads back the signals
 * sent and when (by the Effect `Clock`, so `TestClock` drives the executor's timeouts and grace).
 * It can also stop answering, as a hung engine does, so a test drives the executor's bounds on it.
 *
 * @since 0.2.0
 */
import * as NodePath from "node:path"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Queue from "effect/Queue"
import { ArchiveTooLargeError, ContainerConflictError, ContainerEngine, ContainerEngineError, ContainerNotFoundError } from "../services/ContainerEngine.js"

/**
 * The script for one command.
 *
 * @since 0.2.0
 * @category models
 */
export interface FakeContainerScript {
  /** `obey`: the command dies of SIGTERM. `ignore`: nothing happens. SIGKILL always kills. */
  readonly onTerm: "obey" | "ignore"
  /** No process can start in the box to send a signal (a box at its pids limit). */
  readonly unsignalable?: boolean
  /** The pid line waits for {@link FakeContainerCommand.start}: the exec has started, the call has not. */
  readonly holdStart?: boolean
}

/**
 * A signal sent to a command's group, stamped with the Clock's time.
 *
 * @since 0.2.0
 * @category models
 */
export interface FakeSentSignal {
  readonly signal: ContainerEngine.Signal
  readonly atMillis: number
  /** Whether a process in the box could send it. */
  readonly delivered: boolean
}

/**
 * The test's handle on one command running in a fake box.
 *
 * @since 0.2.0
 * @category models
 */
export interface FakeContainerCommand {
  /** The group's id (the leader's pid). */
  readonly pgid: number
  readonly box: string
  /** The command the executor asked to run. */
  readonly command: string
  readonly signals: Effect.Effect<ReadonlyArray<FakeSentSignal>>
  readonly writeStdout: (data: string) => Effect.Effect<void>
  readonly writeStderr: (data: string) => Effect.Effect<void>
  /** Says the pid line of a command scripted with `holdStart`. */
  readonly start: Effect.Effect<void>
  /** The leader exits with `code`, and its group with it. */
  readonly exit: (code: number) => Effect.Effect<void>
  /** Whether the group has a member left. */
  readonly alive: Effect.Effect<boolean>
  /** Whether the command ran: a served call's leader runs nothing before the host's `go`. */
  readonly ran: Effect.Effect<boolean>
}

/**
 * A box the fake engine made.
 *
 * @since 0.2.0
 * @category models
 */
export interface FakeBox {
  readonly id: string
  readonly options: ContainerEngine.BoxOptions
  readonly removed: boolean
}

/**
 * Control surface of the fake engine.
 *
 * @since 0.2.0
 * @category tags
 */
export class FakeContainerEngineControl extends Context.Tag("effect-bash/FakeContainerEngineControl")<
  FakeContainerEngineControl,
  {
    /** Waits for the next command (in order) and returns its handle. */
    readonly next: Effect.Effect<FakeContainerCommand>
    /** Every box made so far, removed ones included. */
    readonly boxes: Effect.Effect<ReadonlyArray<FakeBox>>
    /** How many execs the engine started for commands (served ones and ones of their own). */
    readonly execs: Effect.Effect<number>
    /** How many served execs wait for a call, in every box. */
    readonly waiting: Effect.Effect<number>
    /** The served execs waiting for a call die, as when a process in the box killed them. */
    readonly killWaiting: Effect.Effect<void>
    /** The engine refuses the next `count` execs (`ContainerEngineError`). */
    readonly refuseExecs: (count: number) => Effect.Effect<void>
    /**
     * Pauses the box (`true`) or unpauses it: while paused, new execs are refused as paused, and its
     * served execs take their input only once it is unpaused.
     */
    readonly pause: (box: string, paused: boolean) => Effect.Effect<void>
    /** The names of the engine's volumes: those of live boxes, and the named ones. */
    readonly volumes: Effect.Effect<ReadonlyArray<string>>
    /**
     * The engine stops answering (`true`), as a hung or stopped daemon does: each request made from
     * then on waits until it answers again (`false`); so does the input sent to an exec, and its
     * output past what had arrived. An exec the host releases meanwhile reads its end at once.
     */
    readonly hang: (hung: boolean) => Effect.Effect<void>
  }
>() {}

const tagModulus = 2147483647n

/** The wrapper's tag of `text` under `(a, b)` (docs/container.md, "Results that cannot be forged"). */
const tag = (text: string, a: bigint, b: bigint): bigint => {
  let h = 0n
  for (const code of Buffer.from(text, "latin1")) h = (h + BigInt(code)) * a % tagModulus
  return (h + b) % tagModulus
}

interface BoxState {
  readonly id: string
  readonly options: ContainerEngine.BoxOptions
  removed: boolean
  stopped: boolean
  readonly commands: Set<CommandState>
  /** The box's files that archives put there, by absolute path. */
  readonly files: Map<string, FakeFile>
  /** Its served execs waiting for a call: each ends its output when it dies. */
  readonly waiting: Map<object, Effect.Effect<void>>
  paused: boolean
  /** What its served execs do once it is unpaused. */
  readonly frozen: Array<Effect.Effect<void>>
}

/** A file, a directory or a link in a fake box. */
interface FakeFile {
  readonly type: "file" | "directory" | "symlink"
  readonly mode: number
  readonly uid: number
  readonly gid: number
  readonly bytes?: Uint8Array | undefined
  readonly linkname?: string | undefined
}

type TarStream = typeof import("tar-stream")

/** tar-stream, an optional peer: loaded only when a test moves archives. */
const tarStream = Effect.promise(async () => {
  const loaded = await import("tar-stream")
  return ((loaded as { default?: TarStream }).default ?? loaded) as TarStream
})

/** The directories every box has: the root, `/tmp`, its mounts' and volumes' paths and their parents. */
const builtInDirectory = (box: BoxState, path: string): boolean =>
  path === "/" || path === "/tmp" ||
  [...box.options.mounts, ...(box.options.volumes ?? [])].some(({ target }) => target === path || target.startsWith(`${path}/`))

const isDirectory = (box: BoxState, path: string): boolean =>
  box.files.get(path)?.type === "directory" || (!box.files.has(path) && builtInDirectory(box, path))

/** Unpacks `tar` into the box's directory `directory`, as an engine's archive upload does. */
const unpackInto = (box: BoxState, directory: string, tar: Uint8Array) =>
  Effect.flatMap(tarStream, (tarLib) =>
    Effect.promise(async () => {
      const extract = tarLib.extract()
      extract.end(Buffer.from(tar))
      for await (const entry of extract) {
        const chunks: Array<Buffer> = []
        for await (const chunk of entry) chunks.push(chunk as Buffer)
        const { header } = entry
        const name = header.name.replace(/^(\.\/)+/, "").replace(/\/+$/, "")
        if (name === "" || name === ".") continue
        const type = header.type === "directory" || header.type === "symlink" ? header.type : "file"
        box.files.set(NodePath.posix.join(directory, name), {
          type,
          mode: header.mode ?? 0o644,
          uid: header.uid ?? 0,
          gid: header.gid ?? 0,
          bytes: type === "file" ? new Uint8Array(Buffer.concat(chunks)) : undefined,
          linkname: header.linkname ?? undefined
        })
      }
    }))

/** `path` in the box and everything under it, as an archive whose top entry is `path`'s last component. */
const packFrom = (box: BoxState, path: string) =>
  Effect.flatMap(tarStream, (tarLib) =>
    Effect.promise(async () => {
      const pack = tarLib.pack()
      const top = NodePath.posix.basename(path)
      const root: FakeFile = box.files.get(path) ?? { type: "directory", mode: 0o755, uid: 0, gid: 0 }
      const below = [...box.files.entries()].filter(([name]) => name.startsWith(`${path}/`)).sort(([a], [b]) => a.localeCompare(b))
      for (const [name, file] of [[path, root] as const, ...below]) {
        const header = {
          name: name === path ? top : `${top}/${name.slice(path.length + 1)}`,
          type: file.type,
          mode: file.mode,
          uid: file.uid,
          gid: file.gid,
          ...(file.linkname === undefined ? {} : { linkname: file.linkname })
        }
        if (file.type === "file") pack.entry(header, Buffer.from(file.bytes ?? new Uint8Array()))
        else pack.entry(header)
      }
      pack.finalize()
      const chunks: Array<Buffer> = []
      for await (const chunk of pack) chunks.push(chunk as Buffer)
      return new Uint8Array(Buffer.concat(chunks))
    }))

interface CommandState {
  readonly handle: FakeContainerCommand
  /** Ends the exec's output without a status: the box went. */
  readonly lose: Effect.Effect<void>
}

/** The wrapper's argv: `[shell, --norc, --noprofile, -c, script, "effect-bash", "serve" | "once"]`. */
const wrapperMode = (argv: ReadonlyArray<string>): "serve" | "once" | undefined =>
  argv.length === 7 && argv[5] === "effect-bash" && (argv[6] === "serve" || argv[6] === "once") ? argv[6] : undefined

const encoder = new TextEncoder()

/**
 * The fake engine and its control; `script` decides how each command behaves.
 *
 * @since 0.2.0
 * @category layers
 */
export const layer = (
  script: (command: string) => FakeContainerScript
): Layer.Layer<ContainerEngine | FakeContainerEngineControl> =>
  Layer.effectContext(Effect.gen(function*() {
    const started = yield* Queue.unbounded<FakeContainerCommand>()
    const boxes = new Map<string, BoxState>()
    let lastId = 0
    let lastPid = 100
    let execCount = 0
    let refusals = 0

    // Each request waits while the engine does not answer (`hang`), and so does the input sent to
    // an exec meanwhile: it reaches the exec, in order, once the engine answers again.
    let hung = false
    let answering = yield* Deferred.make<void>()
    yield* Deferred.succeed(answering, undefined)
    const heldInput: Array<Effect.Effect<void>> = []
    const answered = <A, E>(effect: Effect.Effect<A, E>): Effect.Effect<A, E> =>
      Effect.zipRight(Effect.suspend(() => Deferred.await(answering)), effect)
    /**
     * An exec's next frame as its host end reads it: what arrived before the engine stopped answering
     * comes through, then nothing until it answers again, unless the host released the connection
     * (which then reads its end).
     */
    const nextFrame = (frames: Queue.Queue<ContainerEngine.Frame | undefined>, released: Deferred.Deferred<void>) =>
      Effect.flatMap(Queue.size(frames), (buffered) =>
        buffered > 0 ? Effect.void : Effect.raceFirst(Effect.suspend(() => Deferred.await(answering)), Deferred.await(released))).pipe(
          Effect.zipRight(Queue.take(frames))
        )

    const boxOf = (id: string) => {
      const box = boxes.get(id)
      return box === undefined || box.removed
        ? Effect.fail(new ContainerNotFoundError({ message: `no such container: ${id}` }))
        : Effect.succeed(box)
    }

    // A served exec: one call after another, each a request line and fields on its input; the
    // leader says its pid under the call's token and runs once the host says `go`. An exec of the
    // call's own (`once`) takes one call, gets `go` with the end of its input, and ends with the call.
    const servedExec = (box: BoxState, oneCall: boolean) =>
      Effect.gen(function*() {
        const frames = yield* Queue.unbounded<ContainerEngine.Frame | undefined>()
        const released = yield* Deferred.make<void>()
        const me = {}
        let ended = false
        let dead = false
        let closed = false
        let call: {
          readonly key: ReadonlyArray<bigint>
          readonly token: string
          readonly handle: FakeContainerCommand
          readonly running: Deferred.Deferred<boolean>
          go: boolean
          alive: boolean
        } | undefined
        const say = (stream: "stdout" | "stderr", text: string) =>
          frames.offer({ stream, bytes: Buffer.from(text, "latin1") })
        const die = Effect.suspend(() => {
          if (dead) return Effect.void
          dead = true
          if (call !== undefined) {
            call.alive = false
            Deferred.unsafeDone(call.running, Effect.succeed(call.go))
          }
          call = undefined
          box.waiting.delete(me)
          return Effect.asVoid(frames.offer(undefined))
        })
        const waitForCall = Effect.sync(() => {
          if (closed) return die
          box.waiting.set(me, die)
          return Effect.void
        }).pipe(Effect.flatten)

        const startCall = (text: string) =>
          Effect.gen(function*() {
            const newline = text.indexOf("\n")
            const fields = text.slice(0, newline).split(" ")
            const key = fields.slice(0, 8).map((n) => BigInt(n))
            const token = fields[8]!
            const [_cwd, _mode, command = ""] = text.slice(newline + 1).split("\0")
            box.waiting.delete(me)
            const behaviour = script(command)
            const pgid = ++lastPid
            const signals: Array<FakeSentSignal> = []
            const startGate = yield* Deferred.make<void>()
            // The command runs once the host said `go` (true), or never: its exec closed first (false).
            const running = yield* Deferred.make<boolean>()
            const once = (effect: Effect.Effect<void>) =>
              Effect.flatMap(Deferred.await(running), (ran) => ran ? effect : Effect.void)
            const end = (how: string, _code: number) =>
              Effect.suspend(() => {
                if (call === undefined || !call.alive) return Effect.void
                const [a, b, c, d, , , g, h] = call.key
                call.alive = false
                box.commands.delete(state)
                call = undefined
                const line = `${how} empty`
                return Effect.all([
                  say("stdout", `\0${token} ${line} ${tag(line, a!, b!)} ${tag(line, c!, d!)}\n\0${token} end ${g} ${h}\n`),
                  say("stderr", `\0${token} end ${g} ${h}\n`),
                  oneCall ? die : waitForCall
                ], { discard: true })
              })
            const handle: FakeContainerCommand = {
              pgid,
              box: box.id,
              command,
              signals: Effect.sync(() => [...signals]),
              writeStdout: (data) => once(Effect.asVoid(frames.offer({ stream: "stdout", bytes: encoder.encode(data) }))),
              writeStderr: (data) => once(Effect.asVoid(frames.offer({ stream: "stderr", bytes: encoder.encode(data) }))),
              start: Deferred.succeed(startGate, undefined),
              exit: (code) => once(end(`exit ${code}`, code)),
              alive: Effect.sync(() => current.alive),
              ran: Effect.sync(() => current.go)
            }
            const current = { key, token, handle, go: false, alive: true, running }
            call = current
            const state: CommandState = { handle, lose: die }
            box.commands.add(state)
            signalsOf.set(pgid, { box, signals, state, behaviour: () => behaviour, end })
            yield* started.offer(handle)
            const sayPid = Effect.suspend(() => current.alive ? say("stdout", `\0${token} pid ${pgid}\n`) : Effect.void)
            if (behaviour.holdStart === true) yield* Effect.forkDaemon(Effect.zipRight(Deferred.await(startGate), sayPid))
            else yield* sayPid
          })

        const input = (bytes: Uint8Array) =>
          Effect.suspend(function take(): Effect.Effect<void> {
            if (dead) return Effect.void
            if (hung) return Effect.sync(() => void heldInput.push(Effect.suspend(take)))
            if (box.paused) return Effect.sync(() => void box.frozen.push(Effect.suspend(take)))
            const text = Buffer.from(bytes).toString("latin1")
            // A one-call exec's `go` comes with the call's input: the fake command ignores it.
            if (text === "go\n" || (oneCall && text.startsWith("go\n"))) {
              if (call === undefined) return Effect.void
              call.go = true
              return Deferred.succeed(call.running, true)
            }
            return startCall(text)
          })
        const session: ContainerEngine.ExecSession = {
          sendInput: input,
          write: input,
          next: Effect.suspend(() =>
            ended ? Effect.succeed(undefined) : Effect.tap(nextFrame(frames, released), (frame) => {
              if (frame === undefined) ended = true
            })
          ),
          exitCode: Effect.sync(() => dead ? 0 : undefined),
          // The wrapper reads the end of its input: a leader still waiting for `go` runs nothing.
          close: Effect.suspend(() => {
            closed = true
            Deferred.unsafeDone(released, Effect.void)
            if (call === undefined) return die
            if (!call.go) {
              const cancelled = call
              box.commands.forEach((each) => each.handle === cancelled.handle && box.commands.delete(each))
              return Effect.zipRight(Deferred.succeed(cancelled.running, false), die)
            }
            // The command runs on; the connection is released, and the host reads no more of it.
            return Effect.asVoid(frames.offer(undefined))
          })
        }
        if (!oneCall) yield* waitForCall
        return session
      })

    const signalsOf = new Map<number, {
      readonly box: BoxState
      readonly signals: Array<FakeSentSignal>
      readonly state: CommandState
      readonly behaviour: () => FakeContainerScript
      readonly end: (how: string, code: number) => Effect.Effect<void>
    }>()

    /** The engine's volumes by name: the box an anonymous one goes with. */
    const volumes = new Map<string, { readonly labels: Readonly<Record<string, string>>; readonly box: string | undefined }>()

    const remove = (box: BoxState) =>
      Effect.suspend(() => {
        box.removed = true
        for (const [name, volume] of volumes) if (volume.box === box.id) volumes.delete(name)
        const lost = [...box.commands]
        box.commands.clear()
        return Effect.forEach([...lost.map((command) => command.lose), ...box.waiting.values()], (lose) => lose, { discard: true })
      })

    const engine: ContainerEngine.Service = {
      address: "fake://engine",
      ping: Effect.void,
      cpuCount: Effect.succeed(4),
      hasImage: () => Effect.succeed(true),
      createBox: (options) =>
        Effect.sync(() => {
          const id = `fake${String(++lastId).padStart(12, "0")}`
          boxes.set(id, { id, options, removed: false, stopped: false, commands: new Set(), files: new Map(), waiting: new Map(), paused: false, frozen: [] })
          // Anonymous volumes carry the box's labels and go with it; a named one stays.
          for (const volume of options.volumes ?? []) {
            if (volume.name === undefined) volumes.set(`${id}-volume-${volumes.size}`, { labels: options.labels, box: id })
            else if (!volumes.has(volume.name)) volumes.set(volume.name, { labels: {}, box: undefined })
          }
          return id
        }),
      exec: (id, options) =>
        Effect.flatMap(boxOf(id), (box): Effect.Effect<ContainerEngine.ExecSession, ContainerEngine.Error> => {
          // It plays no TTY: a terminal's shell in a fake box is refused, saying so.
          if (options.tty === true) {
            return Effect.fail(new ContainerEngineError({ message: "the fake engine runs no exec with a TTY (a terminal's shell)" }))
          }
          const mode = wrapperMode(options.argv)
          if (mode === undefined) {
            return Effect.succeed<ContainerEngine.ExecSession>({
              sendInput: () => Effect.void,
              write: () => Effect.void,
              next: Effect.succeed(undefined),
              exitCode: Effect.succeed(0),
              close: Effect.void
            })
          }
          if (box.paused) return Effect.fail(new ContainerConflictError({ message: `container ${id} is paused` }))
          if (refusals > 0) {
            refusals--
            return Effect.fail(new ContainerEngineError({ message: "the fake engine refused the exec" }))
          }
          execCount++
          return servedExec(box, mode === "once")
        }),
      // The executor's own short commands (the supervisor's shell): done.
      run: (id) => Effect.as(boxOf(id), "made"),
      signalGroup: (id, pgid, signal) =>
        Effect.gen(function*() {
          const group = signalsOf.get(pgid)
          if (group === undefined || group.box.id !== id || group.box.removed) return true
          const delivered = group.behaviour().unsignalable !== true
          group.signals.push({ signal, atMillis: yield* Clock.currentTimeMillis, delivered })
          if (!delivered) return false
          if (signal === "SIGKILL") yield* group.end("signal SIGKILL", 137)
          else if (group.behaviour().onTerm === "obey") yield* group.end("signal SIGTERM", 143)
          return true
        }),
      groupAlive: (id, pgid) =>
        Effect.sync(() => {
          const group = signalsOf.get(pgid)
          return group !== undefined && group.box.id === id && !group.box.removed && group.box.commands.has(group.state)
        }),
      boxRunning: (id) => Effect.sync(() => boxes.get(id)?.removed === false && boxes.get(id)?.stopped === false),
      boxPaused: (id) => Effect.sync(() => boxes.get(id)?.paused === true),
      stopBox: (id) =>
        Effect.flatMap(boxOf(id), (box) =>
          Effect.suspend(() => {
            box.stopped = true
            const lost = [...box.commands]
            box.commands.clear()
            return Effect.forEach([...lost.map((command) => command.lose), ...box.waiting.values()], (lose) => lose, { discard: true })
          })),
      startBox: (id) => Effect.flatMap(boxOf(id), (box) => Effect.sync(() => (box.stopped = false))),
      removeBox: (id) => {
        const box = boxes.get(id)
        return box === undefined || box.removed ? Effect.void : remove(box)
      },
      listBoxes: (labels) =>
        Effect.sync(() =>
          [...boxes.values()]
            .filter((box) => !box.removed && Object.entries(labels).every(([name, value]) => box.options.labels[name] === value))
            .map((box) => ({ id: box.id, labels: box.options.labels, createdMillis: 0 }))
        ),
      listVolumes: (labels) =>
        Effect.sync(() =>
          [...volumes]
            .filter(([, volume]) => Object.entries(labels).every(([name, value]) => volume.labels[name] === value))
            .map(([name, volume]) => ({ name, labels: volume.labels }))
        ),
      removeVolume: (name) => Effect.sync(() => void volumes.delete(name)),
      putArchive: (id, path, tar) =>
        Effect.flatMap(boxOf(id), (box) =>
          isDirectory(box, path)
            ? unpackInto(box, path, tar)
            : Effect.fail(new ContainerNotFoundError({ message: `no such directory in ${id}: ${path}` }))),
      getArchive: (id, path, maxBytes) =>
        Effect.flatMap(boxOf(id), (box): Effect.Effect<Uint8Array, ContainerNotFoundError | ArchiveTooLargeError> =>
          box.files.has(path) || builtInDirectory(box, path)
            ? Effect.flatMap(packFrom(box, path), (tar) =>
              tar.length > maxBytes
                ? Effect.fail(new ArchiveTooLargeError({ message: `the archive of ${path} is larger than ${maxBytes} bytes`, maxBytes }))
                : Effect.succeed(tar))
            : Effect.fail(new ContainerNotFoundError({ message: `no such path in ${id}: ${path}` })))
    }

    const answeredSession = (session: ContainerEngine.ExecSession): ContainerEngine.ExecSession => ({
      ...session,
      exitCode: answered(session.exitCode)
    })
    const hanging: ContainerEngine.Service = {
      address: engine.address,
      ping: answered(engine.ping),
      cpuCount: answered(engine.cpuCount),
      hasImage: (image) => answered(engine.hasImage(image)),
      createBox: (options) => answered(engine.createBox(options)),
      exec: (box, options) => answered(Effect.map(engine.exec(box, options), answeredSession)),
      run: (box, argv, user) => answered(engine.run(box, argv, user)),
      signalGroup: (box, pgid, signal) => answered(engine.signalGroup(box, pgid, signal)),
      groupAlive: (box, pgid) => answered(engine.groupAlive(box, pgid)),
      boxRunning: (box) => answered(engine.boxRunning(box)),
      boxPaused: (box) => answered(engine.boxPaused(box)),
      stopBox: (box) => answered(engine.stopBox(box)),
      startBox: (box) => answered(engine.startBox(box)),
      removeBox: (box) => answered(engine.removeBox(box)),
      listBoxes: (labels) => answered(engine.listBoxes(labels)),
      listVolumes: (labels) => answered(engine.listVolumes(labels)),
      removeVolume: (name) => answered(engine.removeVolume(name)),
      putArchive: (box, path, tar) => answered(engine.putArchive(box, path, tar)),
      getArchive: (box, path, maxBytes) => answered(engine.getArchive(box, path, maxBytes))
    }

    return Context.make(ContainerEngine, hanging).pipe(
      Context.add(FakeContainerEngineControl, {
        next: Queue.take(started),
        boxes: Effect.sync(() => [...boxes.values()].map((box) => ({ id: box.id, options: box.options, removed: box.removed }))),
        execs: Effect.sync(() => execCount),
        waiting: Effect.sync(() => [...boxes.values()].reduce((sum, box) => sum + box.waiting.size, 0)),
        killWaiting: Effect.suspend(() =>
          Effect.forEach([...boxes.values()].flatMap((box) => [...box.waiting.values()]), (die) => die, { discard: true })
        ),
        refuseExecs: (count) => Effect.sync(() => void (refusals = count)),
        pause: (id, paused) =>
          Effect.suspend(() => {
            const box = boxes.get(id)
            if (box === undefined) return Effect.void
            box.paused = paused
            return paused ? Effect.void : Effect.forEach(box.frozen.splice(0), (resume) => resume, { discard: true })
          }),
        volumes: Effect.sync(() => [...volumes.keys()]),
        hang: (stop) =>
          Effect.suspend(() => {
            if (stop === hung) return Effect.void
            hung = stop
            if (stop) return Effect.map(Deferred.make<void>(), (waiting) => void (answering = waiting))
            return Effect.zipRight(
              Deferred.succeed(answering, undefined),
              Effect.forEach(heldInput.splice(0), (input) => input, { discard: true })
            )
          })
      })
    )
  }))
