/**
 * The harness agents behind the tool calls in flight: host services (approval, session persistence)
 * want the harness's own agent or session object, while our services see only a `ToolSession`.
 */
import type { ToolSession } from "../../services/ToolExecution.js"
import type { HarnessAgent } from "./harness.js"

/**
 * Who is told when a session's calls start and when its last call in flight has ended.
 */
export interface SessionCallObserver {
  readonly started: (session: string, agent: HarnessAgent) => void
  readonly settled: (session: string) => void
}

/**
 * Which agent each call in flight runs for.
 */
export class HarnessCalls {
  private readonly agents = new Map<string, HarnessAgent>()
  private readonly sessions = new Map<string, { readonly session: unknown; calls: number }>()
  private observer: SessionCallObserver | undefined

  /** Runs `call` with `callId` → `agent` (and its session) known. */
  async during<A>(callId: string, agent: HarnessAgent | undefined, call: () => Promise<A>): Promise<A> {
    const session = agent === undefined ? undefined : sessionOf(agent)
    if (agent === undefined || session === undefined) return call()
    this.agents.set(callId, agent)
    const entry = this.sessions.get(session.id) ?? { session: agent.session, calls: 0 }
    entry.calls += 1
    this.sessions.set(session.id, entry)
    this.observer?.started(session.id, agent)
    try {
      return await call()
    } finally {
      this.agents.delete(callId)
      entry.calls -= 1
      if (entry.calls === 0) {
        this.sessions.delete(session.id)
        this.observer?.settled(session.id)
      }
    }
  }

  /** Sets the one observer of sessions' calls. */
  observe(observer: SessionCallObserver): void {
    this.observer = observer
  }

  /** Whether a call of the session is in flight. */
  busy(sessionId: string): boolean {
    return this.sessions.has(sessionId)
  }

  /** The agent of a call in flight. */
  agentOf(callId: string): HarnessAgent | undefined {
    return this.agents.get(callId)
  }

  /** The harness session object of a session with a call in flight. */
  hostSessionOf(sessionId: string): unknown {
    return this.sessions.get(sessionId)?.session
  }
}

/**
 * The session a harness agent's calls belong to (`agent.session.header.{ id, cwd }`).
 */
export const sessionOf = (agent: HarnessAgent | undefined): ToolSession | undefined => {
  const header = agent?.session?.header
  if (typeof header?.id !== "string" || header.id === "") return undefined
  return typeof header.cwd === "string" ? { id: header.id, cwd: header.cwd } : { id: header.id }
}
