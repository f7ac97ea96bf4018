/**
 * Wires {@link NoticeDelivery} into a running plugin: the sessions' calls, the stream of waiting
 * notices, the harness events that refill a wake budget or retire an agent, and the `tool:bash`
 * prompt text that promises notices only to agents that get them.
 */
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import type { CompletionNotices } from "../../services/CompletionNotices.js"
import { promptText } from "../../tool/internal/bashPrompt.js"
import type { CallRunner } from "../CallRunner.js"
import type { HarnessCalls } from "./HarnessCalls.js"
import { sessionOf } from "./HarnessCalls.js"
import type { CordisContext, CordisDisposable, CordisEvents } from "../host.js"
import type { HarnessAgent, HarnessAssembleContext } from "./harness.js"
import type { CompletionDelivery } from "./NoticeDelivery.js"
import { NoticeDelivery, noticeTargetOf } from "./NoticeDelivery.js"

/**
 * What the wiring needs from the plugin.
 */
export interface HarnessNoticesOptions {
  readonly plugin: string
  readonly mode: CompletionDelivery
  readonly runner: CallRunner<never>
  readonly calls: HarnessCalls
  readonly notices: CompletionNotices["Type"]
  /** Background tasks can be started through the `bash` tool. */
  readonly background: boolean
}

const isUserAuthored = (message: unknown): boolean =>
  typeof message === "object" && message !== null &&
  (message as { readonly source?: { readonly kind?: unknown } }).source?.kind === "user"

/**
 * Starts delivering; returns the `tool:bash` prompt text provider and the disposers, to be yielded in
 * this order (Cordis disposes in reverse, so the delivery closes first: an unloading plugin delivers
 * nothing).
 */
export const startHarnessNotices = (ctx: CordisContext, options: HarnessNoticesOptions): {
  readonly promptText: (context: HarnessAssembleContext | undefined) => string
  readonly disposers: ReadonlyArray<CordisDisposable>
} => {
  const { calls, notices, runner } = options
  const delivery = new NoticeDelivery({
    mode: options.mode,
    plugin: options.plugin,
    take: (session) => runner.runSync(notices.take(session)),
    busy: (session) => calls.busy(session),
    // Never throws: it may run at the end of a call, whose result must stand.
    report: (error) => runner.readSync(Effect.logWarning("effect-bash: a completion notice was not delivered", error))
  })
  calls.observe({
    started: (session, agent) => delivery.track(session, agent),
    settled: (session) => delivery.flush(session)
  })
  // Ends with the runtime (interrupted as a call in flight at unload).
  runner.run(Stream.runForEach(notices.arrivals, (session) => Effect.sync(() => delivery.flush(session))))
    .catch(() => undefined)
  // A user-authored message refills its owner's wake budget; a disposed agent gets nothing more.
  const events = ctx as unknown as CordisEvents
  const offClaimed = events.on(
    "agent/inbox/claimed",
    (payload: { readonly agent?: HarnessAgent; readonly message?: unknown }) => {
      const session = sessionOf(payload.agent)
      if (session !== undefined && isUserAuthored(payload.message)) delivery.userInput(session.id)
    }
  )
  const offDisposed = events.on("agent/disposed", (payload: { readonly agent?: unknown }) => delivery.forget(payload.agent))
  return {
    promptText: (context) =>
      promptText({
        notices: options.background && noticeTargetOf(context?.agent) !== undefined &&
          sessionOf(context?.agent) !== undefined
      }),
    disposers: [offClaimed, offDisposed, () => delivery.close()]
  }
}
