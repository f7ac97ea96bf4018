/**
 * The built-in `session-persistence` env contributor: gives each call with a session
 * `DSH_SESSION_JSONL`, the path where SessionPersistence keeps that session as JSONL.
 *
 * @since 0.1.0
 */
import type * as Scope from "effect/Scope"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import type { BashEnvRegistrationError } from "../services/BashEnvRegistry.js"
import { BashEnvRegistry } from "../services/BashEnvRegistry.js"
import { SessionPersistence } from "../services/SessionPersistence.js"

/**
 * Registers the `session-persistence` contributor for the lifetime of the scope. It owns
 * `DSH_SESSION_JSONL`, set only when the call has a session that the composed persistence locates as
 * `jsonl`; without a {@link SessionPersistence}, never.
 *
 * @since 0.1.0
 * @category constructors
 */
export const register: Effect.Effect<void, BashEnvRegistrationError, BashEnvRegistry | Scope.Scope> = Effect.gen(
  function*() {
    const registry = yield* BashEnvRegistry
    const persistence = yield* Effect.serviceOption(SessionPersistence)
    const contributor: BashEnvRegistry.Contributor = {
      name: "session-persistence",
      keys: [{
        key: "DSH_SESSION_JSONL",
        description:
          "Absolute path of this session's JSONL transcript (a location hint: it may not exist yet; not a credential)"
      }],
      resolve: (execution) =>
        execution.session === undefined || Option.isNone(persistence)
          ? Effect.succeed({})
          : persistence.value.locate(execution.session).pipe(
            Effect.map((location) =>
              Option.match(Option.filter(location, ({ kind }) => kind === "jsonl"), {
                onNone: () => ({}),
                onSome: ({ path }) => ({ DSH_SESSION_JSONL: path })
              })
            )
          )
    }
    yield* registry.register(contributor)
  }
)

/**
 * {@link register} as a layer: the contributor is registered for as long as the layer lives.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer: Layer.Layer<never, BashEnvRegistrationError, BashEnvRegistry> = Layer.scopedDiscard(register)
