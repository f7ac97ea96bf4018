/**
 * `ctx.tasks`: the background-task runtime with Promise methods, over the {@link Tasks} service.
 */
import * as Effect from "effect/Effect"
import type { Tasks } from "../services/Tasks.js"
import type { CallRunner } from "./CallRunner.js"

/**
 * Work a plugin hands the runtime, written with Promises.
 *
 * @since 0.1.0
 * @category models
 */
export interface CordisTaskWork {
  /** Consuming read of new output, already rendered for a model (may be empty). */
  read(): string | Promise<string>
  /** Asks the work to stop; resolves once the request is delivered. */
  cancel(): void | Promise<void>
  /** Settles when the work has stopped; a rejection counts as `failed`. */
  readonly done: Promise<Tasks.Outcome>
}

/**
 * The `ctx.tasks` service. `caller` is the calling session id (owned tasks are visible only to it).
 * Failures reject with the contract errors (`unknown task <id>`, `task <id> belongs to another session`, …).
 *
 * @since 0.1.0
 * @category models
 */
export interface CordisTasks {
  /**
   * Checks that a control surface is attached, then launches the work under a fresh `<kind>-<n>` id;
   * rejects with `launch`'s own error when it rejects.
   */
  start(meta: Tasks.Meta, launch: (id: string) => Promise<CordisTaskWork>): Promise<Tasks.Snapshot>
  get(id: string, caller?: string): Promise<Tasks.Snapshot>
  /** Consuming read of new output plus the snapshot taken after it. */
  read(id: string, caller?: string): Promise<{ readonly output: string; readonly task: Tasks.Snapshot }>
  /** The snapshot once terminal, or after `timeoutMs` (the task stays alive). */
  wait(id: string, timeoutMs: number, caller?: string): Promise<Tasks.Snapshot>
  list(caller?: string): Promise<ReadonlyArray<Tasks.Snapshot>>
  kill(id: string, caller?: string): Promise<"requested" | "already-finished">
}

const failed = (error: unknown): Tasks.Outcome => ({
  status: "failed",
  detail: error instanceof Error ? error.message : String(error)
})

/**
 * The `ctx.tasks` facade over one task runtime.
 */
export const makeTasksFacade = (tasks: Tasks["Type"], runner: CallRunner<never>): CordisTasks => ({
  start: (meta, launch) =>
    runner.run(
      tasks.start(meta, (id) =>
        Effect.tryPromise({ try: () => launch(id), catch: (error) => error }).pipe(
          Effect.map((work) => ({
            read: Effect.tryPromise(async () => work.read()).pipe(Effect.orElseSucceed(() => "")),
            cancel: Effect.tryPromise(async () => work.cancel()).pipe(Effect.ignore),
            done: Effect.promise(() => work.done.catch(failed))
          }))
        )
      )
    ),
  get: (id, caller) => runner.run(tasks.get(id, caller)),
  read: (id, caller) => runner.run(tasks.read(id, caller)),
  wait: (id, timeoutMs, caller) => runner.run(tasks.wait(id, timeoutMs, caller)),
  list: (caller) => runner.run(tasks.list(caller)),
  kill: (id, caller) => runner.run(tasks.kill(id, caller))
})
