/**
 * In-memory {@link SandboxSessions}: overrides live as long as the layer.
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { BashExecutor, BashRequestError } from "../services/BashExecutor.js"
import { sandboxPolicyText, SandboxSessions } from "../services/SandboxSessions.js"
import { canonicalDirSync } from "./internal/sandbox/canonicalDir.js"
import { parseEntry } from "./internal/network/allowList.js"

/**
 * The live session modes, built on the executor in the context (its default mode and workdir).
 *
 * @since 0.1.0
 * @category constructors
 */
export const make: Effect.Effect<SandboxSessions["Type"], never, BashExecutor> = Effect.gen(function*() {
  const executor = yield* BashExecutor
  const overrides = new Map<string, BashExecutor.SandboxMode>()
  const allowances = new Map<string, ReadonlyArray<string>>()
  // The workspace root as placement computes it: the session's canonical cwd, else the executor's
  // configured root, else its default workdir.
  const defaultRoot = executor.workspaceRoot ?? (yield* executor.resolve({ command: ":" }).pipe(
    Effect.map((spec) => spec.workdir),
    Effect.orElseSucceed(() => process.cwd())
  ))
  const standing = (session: string | undefined): BashExecutor.SandboxMode | undefined =>
    executor.sandboxMode === undefined ? undefined : (session === undefined ? undefined : overrides.get(session)) ?? executor.sandboxMode
  return SandboxSessions.of({
    setMode: Effect.fn("SandboxSessions.setMode")(function*(session: string, mode: BashExecutor.SandboxMode | undefined) {
      yield* Effect.annotateCurrentSpan({ "sandbox.session": session, "sandbox.mode": mode ?? "default" })
      if (mode === undefined) overrides.delete(session)
      else overrides.set(session, mode)
    }),
    allowNetwork: Effect.fn("SandboxSessions.allowNetwork")(function*(
      session: string,
      entries: ReadonlyArray<string> | undefined
    ) {
      yield* Effect.annotateCurrentSpan({ "sandbox.session": session, "sandbox.networkAllow": entries?.length ?? 0 })
      const field = "networkAllow"
      if (entries === undefined || entries.length === 0) return void allowances.delete(session)
      if (executor.network === undefined) {
        return yield* new BashRequestError({ field, message: `${field} needs a sandbox with network: { allow }` })
      }
      for (const [index, text] of entries.entries()) {
        const problem = parseEntry(text)
        if (typeof problem === "string") {
          return yield* new BashRequestError({ field, message: `${field} entry ${index} ${JSON.stringify(text)} ${problem}` })
        }
      }
      allowances.set(session, [...entries])
    }),
    networkOf: (session) => Effect.sync(() => (session === undefined ? undefined : allowances.get(session)) ?? []),
    modeOf: (session) => Effect.sync(() => Option.fromNullable(overrides.get(session))),
    standingMode: (session) => Effect.sync(() => standing(session)),
    policyText: (session) => {
      const mode = standing(session?.id)
      return mode === undefined ? undefined : sandboxPolicyText(mode, canonicalDirSync(session?.cwd ?? defaultRoot))
    }
  })
})

/**
 * The live session modes; needs the executor (its default mode and workdir).
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = Layer.effect(SandboxSessions, make)
