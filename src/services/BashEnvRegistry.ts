/**
 * The managed `DSH_*` environment: built-in keys plus scoped contributors.
 */
import type * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import * as Context from "effect/Context"
import * as Data from "effect/Data"
import type { ToolExecution } from "./ToolExecution.js"

/**
 * A contributor could not be registered; `message` is the exact contract text.
 *
 * @since 0.1.0
 * @category errors
 */
export class BashEnvRegistrationError extends Data.TaggedError("BashEnvRegistrationError")<{
  readonly message: string
}> {}

/**
 * A contributor misbehaved at collect time; `message` is the exact contract text.
 *
 * @since 0.1.0
 * @category errors
 */
export class BashEnvCollectError extends Data.TaggedError("BashEnvCollectError")<{
  readonly message: string
}> {}

/**
 * The managed environment registry.
 *
 * @since 0.1.0
 * @category tags
 */
export class BashEnvRegistry extends Context.Tag("effect-bash/BashEnvRegistry")<
  BashEnvRegistry,
  {
    /** Registers for the lifetime of the calling scope. */
    readonly register: (
      contributor: BashEnvRegistry.Contributor
    ) => Effect.Effect<void, BashEnvRegistrationError, Scope.Scope>
    /** A frozen map with sorted keys: DSH_HOME, DSH_SHELL, DSH_SESSION_ID (with a session), then contributors. */
    readonly collect: (execution: ToolExecution) => Effect.Effect<Readonly<Record<string, string>>, BashEnvCollectError>
    /** Every declaration sorted by key; runs no contributor. */
    readonly list: Effect.Effect<ReadonlyArray<BashEnvRegistry.Declaration>>
  }
>() {}

/**
 * The types of the {@link BashEnvRegistry} service.
 *
 * @since 0.1.0
 * @category models
 */
export declare namespace BashEnvRegistry {
  /**
   * A key a contributor owns, with the description `list()` shows.
   *
   * @since 0.1.0
   * @category models
   */
  export interface Key {
    readonly key: string
    readonly description: string
  }

  /**
   * A named source of managed variables.
   *
   * @since 0.1.0
   * @category models
   */
  export interface Contributor {
    readonly name: string
    readonly keys: ReadonlyArray<Key>
    /** Values for this call; may omit declared keys, may not return undeclared ones. */
    readonly resolve: (execution: ToolExecution) => Effect.Effect<Readonly<Record<string, unknown>>>
  }

  /**
   * A declared key, as listed without running its contributor.
   *
   * @since 0.1.0
   * @category models
   */
  export interface Declaration {
    readonly key: string
    readonly contributor: string
    readonly description: string
  }
}
