/**
 * Every request to an engine bounded on the Clock, whatever the engine's own client does: an engine
 * that stops answering (a hung or stopped daemon, a lost network) fails each operation with
 * `EngineUnavailable`, naming the engine, the operation and the bound. An exec's output stream is the
 * one wait not bounded here: a running call's output is legitimately long, and the executor bounds it
 * by the call's own timeout and grace (a kill that the engine does not answer loses the call).
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import type { ContainerEngine } from "../../../services/ContainerEngine.js"
import { EngineUnavailableError } from "../../../services/ContainerEngine.js"

/** `engine` with each request bounded by `timeoutMs`. */
export const boundedEngine = (engine: ContainerEngine.Service, timeoutMs: number): ContainerEngine.Service => {
  // Interruptible, so the bound holds where the caller masks interruption (an acquire, a finalizer).
  const bound = <A, E>(what: string, effect: Effect.Effect<A, E>): Effect.Effect<A, E | EngineUnavailableError> =>
    effect.pipe(
      Effect.interruptible,
      Effect.timeoutFail({
        duration: timeoutMs,
        onTimeout: () => new EngineUnavailableError({ message: `${what}: the container engine at ${engine.address} did not answer within ${timeoutMs} ms` })
      })
    )
  return {
    address: engine.address,
    ping: bound("ping", engine.ping),
    cpuCount: bound("cpu count", engine.cpuCount),
    hasImage: (image) => bound("image inspect", engine.hasImage(image)),
    createBox: (options) => bound("container create", engine.createBox(options)),
    exec: (box, options) =>
      Effect.suspend(() => {
        // An exec the engine started just as the bound ran out has no owner: it is closed.
        let started: ContainerEngine.ExecSession | undefined
        return bound("exec start", Effect.tap(engine.exec(box, options), (session) => Effect.sync(() => (started = session)))).pipe(
          Effect.onError(() => started === undefined ? Effect.void : started.close),
          Effect.map((session) => ({ ...session, exitCode: bound("exec inspect", session.exitCode) }))
        )
      }),
    run: (box, argv, user) => bound("exec run", engine.run(box, argv, user)),
    signalGroup: (box, pgid, signal) => bound(`${signal} to group ${pgid}`, engine.signalGroup(box, pgid, signal)),
    groupAlive: (box, pgid) => bound(`group ${pgid} look-up`, engine.groupAlive(box, pgid)),
    boxRunning: (box) => bound("container inspect", engine.boxRunning(box)),
    // Not known to be paused when the engine does not say.
    boxPaused: (box) => bound("container inspect", engine.boxPaused(box)).pipe(Effect.orElseSucceed(() => false)),
    stopBox: (box) => bound("container stop", engine.stopBox(box)),
    startBox: (box) => bound("container start", engine.startBox(box)),
    removeBox: (box) => bound("container remove", engine.removeBox(box)),
    listBoxes: (labels) => bound("container list", engine.listBoxes(labels)),
    listVolumes: (labels) => bound("volume list", engine.listVolumes(labels)),
    removeVolume: (name) => bound("volume remove", engine.removeVolume(name)),
    putArchive: (box, path, tar) => bound("archive upload", engine.putArchive(box, path, tar)),
    getArchive: (box, path, maxBytes) => bound("archive download", engine.getArchive(box, path, maxBytes))
  }
}
