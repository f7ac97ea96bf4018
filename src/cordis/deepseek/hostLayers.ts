/**
 * Our Approval and SessionPersistence seams backed by the host's own services when it has them. The
 * host's services are read at call time (`ctx.get`), so one that loads, unloads or reloads after
 * our plugin is followed without rebuilding anything.
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as ApprovalCallback from "../../layers/ApprovalCallback.js"
import type { Approval } from "../../services/Approval.js"
import { SessionPersistence } from "../../services/SessionPersistence.js"
import type { HarnessCalls } from "./HarnessCalls.js"
import type { HostApproval, HostSessionPersistence } from "./harness.js"
import { runFacts, shownCommand, shownJustification } from "../../tool/internal/approvalText.js"

/**
 * Reads an optional host service, or `undefined` while there is none.
 */
export type HostLookup<S> = () => S | undefined

const hasMethod = <S>(value: unknown, method: string): value is S =>
  typeof value === "object" && value !== null && typeof (value as Record<string, unknown>)[method] === "function"

/**
 * A typed reader of the optional host service `name` (one with a `method` function).
 */
export const hostLookup = <S>(get: (name: string) => unknown, name: string, method: string): HostLookup<S> => () => {
  const service = get(name)
  return hasMethod<S>(service, method) ? service : undefined
}

// The same facts, escaped and bounded, as the CLI's and the MCP server's questions show.
const approvalReason = (request: Approval.Request): string =>
  [
    `Run this command with ${request.mode} access: ${shownCommand(request)}`,
    ...runFacts(request).map(([label, value]) => `${label}: ${value}`),
    `Reason: ${shownJustification(request)}`
  ].join("\n")

/**
 * Approval answered by the host's `approval` service for the agent of the call in flight;
 * `unavailable` while the host has none (or the call has no agent).
 */
export const hostApprovalLayer = (approval: HostLookup<HostApproval>, calls: HarnessCalls): Layer.Layer<Approval> =>
  ApprovalCallback.layer(async (request, signal): Promise<Approval.Outcome> => {
    const host = approval()
    const agent = calls.agentOf(request.callId)
    if (host === undefined || agent === undefined) return "unavailable"
    const outcome = await host.request({
      agent,
      toolName: request.toolName,
      callId: request.callId,
      reason: approvalReason(request),
      signal
    })
    return outcome as Approval.Outcome
  })

const isLocation = (value: unknown): value is SessionPersistence.Location =>
  typeof value === "object" && value !== null &&
  typeof (value as { kind?: unknown }).kind === "string" && typeof (value as { path?: unknown }).path === "string"

const nothingLocated = Effect.succeed(Option.none<SessionPersistence.Location>())

/**
 * SessionPersistence that locates sessions through the host's `sessionPersistence` service when
 * there is one (handing it the harness's own session object of a call in flight), and otherwise —
 * and for `record`/`replay`, which a harness does through its own log — through the
 * SessionPersistence in context, if any (with none, nothing is located, recorded or replayed).
 */
export const hostSessionPersistenceLayer = (
  persistence: HostLookup<HostSessionPersistence>,
  calls: HarnessCalls
): Layer.Layer<SessionPersistence> =>
  Layer.effect(
    SessionPersistence,
    Effect.map(Effect.serviceOption(SessionPersistence), (fallback) =>
      SessionPersistence.of({
        locate: (session) => {
          const host = persistence()
          if (host === undefined) {
            return Option.match(fallback, { onNone: () => nothingLocated, onSome: (stored) => stored.locate(session) })
          }
          return Effect.tryPromise(async () => host.locate(calls.hostSessionOf(session.id) ?? session)).pipe(
            Effect.map((location) => (isLocation(location) ? Option.some(location) : Option.none())),
            Effect.orElseSucceed(() => Option.none<SessionPersistence.Location>()),
            Effect.withSpan("SessionPersistence.locate")
          )
        },
        record: (record) => Option.match(fallback, { onNone: () => Effect.void, onSome: (stored) => stored.record(record) }),
        replay: (session) =>
          Option.match(fallback, {
            onNone: () => Effect.succeed<ReadonlyArray<SessionPersistence.ToolCallRecord>>([]),
            onSome: (stored) => stored.replay(session)
          })
      }))
  )
