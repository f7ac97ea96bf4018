/**
 * The reaper for hosts that die without running finalizers (SIGKILL, the OOM killer, SIGHUP of a
 * host that does not handle it): a tiny `bash` process, in its own session, that reads one line per
 * event from a pipe held by the host. It learns each process group as it starts and forgets it
 * once it is gone; when the pipe closes without a goodbye — the host died — it SIGKILLs every group
 * it still knows and removes the directories it was given. If it cannot start or dies, the layer
 * keeps working without it (a warning says so).
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { HostReaper } from "../services/HostReaper.js"
import { makeReaperProcess } from "./internal/spawner/reaperProcess.js"

/**
 * The reaper as a layer: it starts with the layer and is told goodbye when the layer closes.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer: Layer.Layer<HostReaper> = Layer.scoped(
  HostReaper,
  Effect.map(Effect.tap(makeReaperProcess, ({ start }) => start), ({ reaper }) => reaper)
)
