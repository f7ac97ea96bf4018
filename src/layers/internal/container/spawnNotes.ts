/**
 * What both ways of running a call in a box share: the notes a call's stderr may end with, the
 * failure of a start, and the retry of a box found gone.
 *
 * @internal
 */
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import type { ContainerEngine } from "../../../services/ContainerEngine.js"
import { SpawnError } from "../../../services/ProcessSpawner.js"
import type { Box } from "./Boxes.js"
import type { LeaderStatus } from "./wrapper.js"

/** The note a box removed mid-call leaves in stderr. */
export const boxGoneText = (box: string): string =>
  `effect-bash: the container ${box.slice(0, 12)} was removed while the command ran; the next command starts in a new one\n`

/** The note of a call whose engine stopped answering before the command's end came through: `reason` says why. */
export const engineLostText = (reason: string): string =>
  `effect-bash: the container engine stopped answering while the command ran, so how it ended is unknown (it is reported killed): ${reason}\n`

/** The note a command killed by the box's memory limit leaves in stderr. */
export const oomText = (memoryMb: number | undefined): string =>
  `effect-bash: killed by the container's memory limit${memoryMb === undefined ? "" : ` (${memoryMb} MB)`}\n`

/**
 * The note of a call whose wrapper's output ended without a status: the wrapper was killed, with the
 * box's processes (a restart) or by a process in the box, or the engine stopped answering.
 */
export const lostText =
  "effect-bash: the command's supervisor in the container stopped answering before it said how the command " +
  "ended; what was left of the command is killed\n"

/**
 * The note of a call whose output ended without a status, asked of the engine: the box went (marked
 * gone, so the next call gets a new one), the engine stopped answering, or the wrapper was lost.
 */
export const missingStatusNote = (engine: ContainerEngine.Service, box: Box): Effect.Effect<string> =>
  Effect.gen(function*() {
    if (!box.gone) {
      const running = yield* Effect.either(engine.boxRunning(box.id))
      if (running._tag === "Right" && !running.right) box.gone = true
      if (running._tag === "Left" && running.left._tag === "EngineUnavailable") return engineLostText(running.left.message)
    }
    return box.gone ? boxGoneText(box.id) : lostText
  })

/**
 * The note a call's stderr ends with, if any, once its output ended with `status` (or none); `lost`
 * is why the call was lost ({@link CallLoss}), if it was.
 */
export const endNote = (
  engine: ContainerEngine.Service,
  box: Box,
  status: LeaderStatus | undefined,
  memoryMb: number | undefined,
  lost: string | undefined
): Effect.Effect<string | undefined> =>
  status === undefined
    ? lost === undefined ? missingStatusNote(engine, box) : Effect.succeed(engineLostText(lost))
    : Effect.succeed(status.oomKilled && status.signal === "SIGKILL" ? oomText(memoryMb) : undefined)

/**
 * A running call's hold on its box. A request of the call's (a signal, a look at its group) that the
 * engine does not answer within its bound loses the call: nothing more of it can be learned. Its box
 * is taken as lost (the session's next call gets a new one, and the old one is removed once the
 * engine answers), its exec is closed, so its output ends, and it ends killed, with the engine-lost
 * note saying why.
 */
export interface CallLoss {
  /** Why the call was lost; `undefined` while it is not. */
  readonly reason: string | undefined
  /** Logs `what` failed; an engine that did not answer loses the call. */
  readonly failed: (what: string, error: ContainerEngine.Error) => Effect.Effect<void>
}

export const callLoss = (box: Box, exec: ContainerEngine.ExecSession): CallLoss => {
  let reason: string | undefined
  return {
    get reason() {
      return reason
    },
    failed: (what, error) =>
      Effect.zipRight(
        Effect.logWarning(what, error.message),
        Effect.suspend(() => {
          if (error._tag !== "EngineUnavailable" || reason !== undefined) return Effect.void
          reason = error.message
          box.gone = true
          return Effect.zipRight(
            Effect.logWarning(`the container engine did not answer: container ${box.id.slice(0, 12)} is taken as lost, and the session's next command starts in a new one`),
            exec.close
          )
        })
      )
  }
}

export const spawnFailure = (message: string, code?: string) => new SpawnError({ code, message })

/** The session's box was gone when the exec was created: nothing started. */
export class BoxGone extends Data.TaggedError("BoxGone")<{ readonly failure: SpawnError }> {}

/** Why a shell that said no pid did not start, for the call's error. */
export const noShellText = (box: string, said: string, gone: boolean, path: string | undefined): string =>
  `the command's shell did not start in container ${box.slice(0, 12)}` +
  (said === "" ? (gone ? ": the container is gone" : "") : `: ${said}`) +
  // The engine looks for bash on the call's PATH when it sets one.
  (path === undefined ? " (the image needs bash)" : ` (the image needs bash on PATH=${path})`)
