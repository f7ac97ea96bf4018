/**
 * Completion notices for a host that can reach an agent unprompted (a harness agent's inbox), rather
 * than with the session's next tool result.
 */
import type * as Effect from "effect/Effect"
import type * as Stream from "effect/Stream"
import * as Context from "effect/Context"
import type { Tasks } from "./Tasks.js"

/**
 * The notices {@link AgentTools} holds for their owners, seen from a delivering host. It is the same
 * queue as `AgentTools.takeNotices`: a notice is handed out once, by either, and is dropped once a
 * tool result has shown that task's final status.
 *
 * @since 0.1.0
 * @category tags
 */
export class CompletionNotices extends Context.Tag("effect-bash/CompletionNotices")<
  CompletionNotices,
  {
    /** The owning session (`undefined` for session-less tasks) each time a notice starts waiting for it. */
    readonly arrivals: Stream.Stream<string | undefined>
    /** Takes the waiting notices of a session, oldest first, each once. */
    readonly take: (session: string | undefined) => Effect.Effect<ReadonlyArray<CompletionNotices.Notice>>
  }
>() {}

/**
 * The types of the {@link CompletionNotices} service.
 *
 * @since 0.1.0
 * @category models
 */
export declare namespace CompletionNotices {
  /**
   * One completion notice: the exact notice text and the finished task it reports.
   *
   * @since 0.1.0
   * @category models
   */
  export interface Notice {
    readonly task: Tasks.Snapshot
    /** `background task <id> (<kind>: <label>) finished <status line>. Read its output with task_output.` */
    readonly text: string
  }
}
