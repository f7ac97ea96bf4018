/**
 * A box's served execs between calls (`served.ts`): a call takes the one that waited least (or
 * starts a new one when none waits) and gives it back once its output has ended cleanly. At most
 * {@link maxIdle} wait, each at most {@link idleMs} by the Clock; all are closed with the pool (a
 * closed exec's wrapper reads the end of its input and exits).
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import * as ExecutionStrategy from "effect/ExecutionStrategy"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Scope from "effect/Scope"
import type { ContainerEngine } from "../../../services/ContainerEngine.js"
import { servedArgv } from "./wrapper.js"

/** How many served execs may wait in a box: more calls at once start more, closed after. */
export const maxIdle = 2

/** How long a served exec may wait for a call before it is closed. */
export const idleMs = 60_000

/** An exec taken from the pool; `pooled` when it had served a call before (it may have died since). */
export interface TakenExec {
  readonly exec: ContainerEngine.ExecSession
  readonly pooled: boolean
}

interface Waiting {
  readonly exec: ContainerEngine.ExecSession
  reaper: Fiber.RuntimeFiber<void> | undefined
}

export class ExecPool {
  private idle: Array<Waiting> = []
  private closed = false

  private constructor(
    private readonly engine: ContainerEngine.Service,
    readonly box: string,
    private readonly scope: Scope.CloseableScope
  ) {}

  /** The pool of `box`, closed with `parent` at the latest. */
  static make(engine: ContainerEngine.Service, box: string, parent: Scope.Scope): Effect.Effect<ExecPool> {
    return Effect.map(Scope.fork(parent, ExecutionStrategy.sequential), (scope) => new ExecPool(engine, box, scope))
  }

  /** A waiting exec, else a new one; the caller gives it back ({@link give}) or closes it. */
  get take(): Effect.Effect<TakenExec, ContainerEngine.Error> {
    return Effect.suspend((): Effect.Effect<TakenExec, ContainerEngine.Error> => {
      const waiting = this.idle.pop()
      if (waiting === undefined) {
        return Effect.map(
          this.engine.exec(this.box, { argv: servedArgv("serve"), env: {}, stdin: true }),
          (exec) => ({ exec, pooled: false })
        )
      }
      const reaper = waiting.reaper
      waiting.reaper = undefined
      return Effect.as(reaper === undefined ? Effect.void : Fiber.interrupt(reaper), { exec: waiting.exec, pooled: true })
    })
  }

  /** Takes back an exec whose last call ended cleanly: it waits for the next, or is closed. */
  give(exec: ContainerEngine.ExecSession): Effect.Effect<void> {
    return Effect.suspend(() => {
      if (this.closed || this.idle.length >= maxIdle) return exec.close
      const waiting: Waiting = { exec, reaper: undefined }
      this.idle.push(waiting)
      // Interruptible: `give` runs in a finalizer, and the fork would inherit its masked region.
      const reap = Effect.interruptible(Effect.sleep(idleMs)).pipe(
        Effect.zipRight(Effect.suspend(() => {
          // Taken meanwhile: it is the call's now.
          if (!this.idle.includes(waiting)) return Effect.void
          this.idle = this.idle.filter((each) => each !== waiting)
          return exec.close
        }))
      )
      return Effect.flatMap(Effect.forkIn(reap, this.scope), (fiber) =>
        Effect.sync(() => {
          if (this.idle.includes(waiting)) waiting.reaper = fiber
        }))
    })
  }

  /** Closes every waiting exec (they may have died with the box's processes). */
  get flush(): Effect.Effect<void> {
    return Effect.suspend(() => {
      const waiting = this.idle
      this.idle = []
      return Effect.forEach(waiting, (each) =>
        Effect.zipRight(each.reaper === undefined ? Effect.void : Fiber.interrupt(each.reaper), each.exec.close), { discard: true })
    })
  }

  /** Closes the pool: its waiting execs now, an exec given back later at once. */
  get close(): Effect.Effect<void> {
    return Effect.suspend(() => {
      this.closed = true
      return Effect.zipRight(this.flush, Scope.close(this.scope, Exit.void))
    })
  }
}
