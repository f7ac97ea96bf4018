/**
 * What a terminal in a box needs of `/proc`, answered inside the box: a bash of the box's user, one
 * exec kept for the terminal's lifetime, that reads requests on stdin and answers one line each. It
 * looks at the box's own `/proc` the way `procTerminal.ts` looks at the host's — the foreground group
 * (`tpgid` of the shell's stat) and whether it sleeps reading the PTY (its wait channel and system
 * call, a read of the PTY, select/poll with the PTY as stdin, or an epoll instance that watches it),
 * and every process of the terminal (its session, the processes holding its PTY, their descendants,
 * and those found before that are still the same) — and signals them with bash's own `kill`. It uses
 * builtins only: no request forks, so it answers in a box at its pids limit, and nothing of the host
 * is needed (an engine elsewhere works the same).
 *
 * Requests are `<id> <op> [args]`; answers `<id> <fields>`:
 * `fg` → `<pgid> <0|1 reading> <wakeups>` or `none`; `group <SIG> <pgid>` → `ok` or `gone`;
 * `all <SIG>` → the number of processes found (then signalled); `alive` → that number;
 * `others` → that number without the shell; `exit` ends the probe. Input that ends without `exit`
 * (the host died, or lost its connection) ends the terminal too: TERM and HUP, a grace, then KILL.
 *
 * @internal
 */
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as ExecutionStrategy from "effect/ExecutionStrategy"
import * as Exit from "effect/Exit"
import * as Scope from "effect/Scope"
import { readFileSync } from "node:fs"
import type { ContainerEngine } from "../../../services/ContainerEngine.js"

let script: string | undefined
/** The probe's text: `terminalProbe.sh` beside this module ($1 = the shell's pid in the box), read when first needed. */
const probeScript = (): string => script ??= readFileSync(new URL("./terminalProbe.sh", import.meta.url), "utf8")

/** The probe of one terminal. */
export interface TerminalProbe {
  /**
   * The answer's fields to `request`, or `undefined` when none came within the bound (the probe or
   * its box is gone, or the engine is slow).
   */
  readonly ask: (request: string) => Effect.Effect<ReadonlyArray<string> | undefined>
  /** Whether the probe's exec has ended: nothing more will be answered. */
  readonly ended: () => boolean
}

/**
 * Starts the probe of the shell `leader` in `box`, as the box's user; its exec is closed with the
 * scope. Each answer is awaited at most `answerMs` of the Clock.
 */
export const makeTerminalProbe = (
  engine: ContainerEngine.Service,
  box: string,
  leader: number,
  answerMs: number
): Effect.Effect<TerminalProbe, ContainerEngine.Error, Scope.Scope> =>
  Effect.gen(function*() {
    const done = yield* Deferred.make<void>()
    // The reader's scope closes after the exec's release (made first, it is closed last), which awaits the reader's end.
    const readerScope = yield* Scope.fork(yield* Effect.scope, ExecutionStrategy.sequential)
    // Told to exit, and awaited (bounded), so the probe is gone from the box when the terminal is.
    const exec = yield* Effect.acquireRelease(
      engine.exec(box, {
        argv: ["bash", "--norc", "--noprofile", "-c", probeScript(), "effect-bash-terminal-probe", String(leader)],
        env: {},
        stdin: true
      }),
      (exec) =>
        exec.write(Buffer.from("0 exit\n", "latin1")).pipe(
          Effect.zipRight(Effect.timeoutTo(Effect.interruptible(Deferred.await(done)), {
            duration: Duration.millis(answerMs),
            onTimeout: () => undefined,
            onSuccess: () => undefined
          })),
          Effect.ensuring(exec.close)
        )
    )
    const pending = new Map<string, Deferred.Deferred<ReadonlyArray<string> | undefined>>()
    let ended = false
    let counter = 0
    // One reader for the probe's lifetime: an answer that comes after its asker gave up is dropped by id.
    const read = Effect.gen(function*() {
      let partial = ""
      for (let frame = yield* exec.next; frame !== undefined; frame = yield* exec.next) {
        if (frame.stream !== "stdout") continue
        const lines = (partial + Buffer.from(frame.bytes).toString("latin1")).split("\n")
        partial = lines.pop()!
        for (const line of lines) {
          const [id, ...fields] = line.split(" ")
          const waiting = pending.get(id!)
          if (waiting !== undefined) yield* Deferred.succeed(waiting, fields)
        }
      }
    }).pipe(
      Effect.ensuring(Effect.suspend(() => {
        ended = true
        return Effect.zipRight(
          Effect.forEach(pending.values(), (waiting) => Deferred.succeed(waiting, undefined), { discard: true }),
          Deferred.succeed(done, undefined)
        )
      }))
    )
    yield* Effect.forkIn(Effect.interruptible(read), readerScope)
    const ask = (request: string) =>
      Effect.suspend(() => {
        if (ended) return Effect.succeed(undefined)
        const id = String(++counter)
        return Effect.flatMap(Deferred.make<ReadonlyArray<string> | undefined>(), (answer) => {
          pending.set(id, answer)
          return Effect.zipRight(
            exec.write(Buffer.from(`${id} ${request}\n`, "latin1")),
            // Interruptible: a close asks from an uninterruptible region, and the bound must hold there.
            Effect.timeoutTo(Effect.interruptible(Deferred.await(answer)), {
              duration: Duration.millis(answerMs),
              onTimeout: () => undefined,
              onSuccess: (fields) => fields
            })
          ).pipe(Effect.ensuring(Effect.sync(() => pending.delete(id))))
        })
      })
    return { ask, ended: () => ended }
  })

/** A terminal's probe, kept while the terminal is open. */
export interface KeptProbe {
  readonly ask: TerminalProbe["ask"]
  /** Whether it was released: its last `all SIGKILL` was sent, and nothing is asked any more. */
  readonly released: () => boolean
}

/**
 * The probe of a terminal for as long as it is open: one that has ended (a process of the box killed
 * it) is started again at the next question, which then asks the new one (it finds the terminal's
 * processes afresh, by session and PTY). Released with the scope, after a last `all SIGKILL`: the
 * terminal leaves nothing in the box, and its probe exits. Fails when the first probe cannot start.
 */
export const keepTerminalProbe = (
  start: Effect.Effect<TerminalProbe, ContainerEngine.Error, Scope.Scope>
): Effect.Effect<KeptProbe, ContainerEngine.Error, Scope.Scope> =>
  Effect.gen(function*() {
    const lock = yield* Effect.makeSemaphore(1)
    let current: { readonly probe: TerminalProbe; readonly scope: Scope.CloseableScope } | undefined
    let released = false
    const fresh = Effect.flatMap(Scope.make(), (scope) =>
      start.pipe(
        Scope.extend(scope),
        Effect.map((probe) => ({ probe, scope })),
        Effect.tapError(() => Scope.close(scope, Exit.void))
      ))
    const closeCurrent = Effect.suspend(() => {
      const old = current
      current = undefined
      return old === undefined ? Effect.void : Scope.close(old.scope, Exit.void)
    })
    const probeNow = lock.withPermits(1)(Effect.suspend(() => {
      if (current !== undefined && !current.probe.ended()) return Effect.succeed<TerminalProbe | undefined>(current.probe)
      if (released) return Effect.succeed(undefined)
      return Effect.zipRight(
        closeCurrent,
        fresh.pipe(
          Effect.tap((started) => Effect.sync(() => (current = started))),
          Effect.map(({ probe }) => probe),
          Effect.catchAll((error) =>
            Effect.as(Effect.logWarning("could not start a terminal's probe again", error.message), undefined)
          )
        )
      )
    }))
    const ask = (request: string) =>
      Effect.flatMap(probeNow, (probe) => probe === undefined ? Effect.succeed(undefined) : probe.ask(request))
    yield* Effect.acquireRelease(
      Effect.tap(fresh, (started) => Effect.sync(() => (current = started))),
      () =>
        Effect.zipRight(
          ask("all SIGKILL"),
          Effect.suspend(() => {
            released = true
            return lock.withPermits(1)(closeCurrent)
          })
        )
    )
    return { ask, released: () => released }
  })
