/**
 * The in-memory {@link BashEnvRegistry}: scoped contributor registrations and the per-call managed
 * `DSH_*` environment.
 *
 * @since 0.1.0
 */
import type * as ConfigError from "effect/ConfigError"
import type * as Scope from "effect/Scope"
import * as Config from "effect/Config"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Ref from "effect/Ref"
import { BashEnvCollectError, BashEnvRegistrationError, BashEnvRegistry } from "../services/BashEnvRegistry.js"
import type { ToolExecution } from "../services/ToolExecution.js"
import { fnWhenTraced } from "../services/internal/whenTraced.js"
import { resolveDshHome } from "./internal/bashEnv/dshHome.js"
import { registrationProblem } from "./internal/bashEnv/registration.js"

/**
 * Options of {@link layer}.
 *
 * @since 0.1.0
 * @category models
 */
export interface Options {
  /** The harness home; when absent or blank, a non-blank `$DSH_HOME`, else `~/.dsh`. */
  readonly dshHome?: string
}

interface Registrations {
  readonly byName: ReadonlyMap<string, BashEnvRegistry.Contributor>
  /** key → owning contributor name */
  readonly owners: ReadonlyMap<string, string>
}

const byCodeUnits = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0)

const withContributor = (registrations: Registrations, contributor: BashEnvRegistry.Contributor): Registrations => ({
  byName: new Map(registrations.byName).set(contributor.name, contributor),
  owners: new Map([...registrations.owners, ...contributor.keys.map(({ key }) => [key, contributor.name] as const)])
})

const withoutContributor = (registrations: Registrations, contributor: BashEnvRegistry.Contributor): Registrations => {
  // Only this exact registration leaves; a later one under the same name is not ours to remove.
  if (registrations.byName.get(contributor.name) !== contributor) return registrations
  const byName = new Map(registrations.byName)
  byName.delete(contributor.name)
  const owners = new Map(registrations.owners)
  for (const { key } of contributor.keys) owners.delete(key)
  return { byName, owners }
}

/** Checks one contributor's answer and adds its values; fails with the contract text on misbehaviour. */
const addValues = (
  contributor: BashEnvRegistry.Contributor,
  returned: Readonly<Record<string, unknown>>,
  into: Record<string, string>
): Effect.Effect<void, BashEnvCollectError> => {
  const declared = new Set(contributor.keys.map(({ key }) => key))
  for (const [key, value] of Object.entries(returned)) {
    if (!declared.has(key)) {
      return new BashEnvCollectError({
        message: `bash env contributor "${contributor.name}" returned undeclared key "${key}"`
      })
    }
    if (value === undefined) continue
    if (typeof value !== "string") {
      return new BashEnvCollectError({
        message: `bash env contributor "${contributor.name}" returned a non-string value for "${key}"`
      })
    }
    into[key] = value
  }
  return Effect.void
}

/**
 * The live managed-environment registry; `DSH_HOME` is resolved as it is built (see {@link layer}).
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (options: Options = {}): Effect.Effect<BashEnvRegistry["Type"], ConfigError.ConfigError> =>
  Effect.gen(function*() {
    const dshHome = yield* resolveDshHome(options.dshHome)
    const registrations = yield* Ref.make<Registrations>({ byName: new Map(), owners: new Map() })

    const admit = (contributor: BashEnvRegistry.Contributor) =>
      Ref.modify(
        registrations,
        (current): readonly [Either.Either<BashEnvRegistry.Contributor, BashEnvRegistrationError>, Registrations] => {
          const problem = registrationProblem(contributor, current.byName, current.owners)
          return problem === undefined
            ? [Either.right(contributor), withContributor(current, contributor)]
            : [Either.left(new BashEnvRegistrationError({ message: problem })), current]
        }
      ).pipe(Effect.flatMap((admitted) => admitted))

    const register = Effect.fn("BashEnvRegistry.register")(
      function*(contributor: BashEnvRegistry.Contributor): Effect.fn.Return<void, BashEnvRegistrationError, Scope.Scope> {
        // A private copy: later mutation of the caller's object cannot change what was validated.
        const registered: BashEnvRegistry.Contributor = {
          name: contributor.name,
          keys: contributor.keys.map(({ description, key }) => ({ key, description })),
          resolve: contributor.resolve
        }
        yield* Effect.acquireRelease(
          admit(registered),
          (admitted) => Ref.update(registrations, (current) => withoutContributor(current, admitted))
        )
      }
    )

    const collectBody = function*(
      execution: ToolExecution
    ): Effect.fn.Return<Readonly<Record<string, string>>, BashEnvCollectError> {
      const { byName } = yield* Ref.get(registrations)
      const contributors = [...byName.values()].sort((a, b) => byCodeUnits(a.name, b.name))
      const answers = yield* Effect.forEach(
        contributors,
        (contributor) => Effect.map(contributor.resolve(execution), (answer) => [contributor, answer] as const),
        // Concurrent only when there is something to overlap: a fiber per contributor is not free.
        { concurrency: contributors.length > 1 ? "unbounded" : 1 }
      )
      const values: Record<string, string> = { DSH_HOME: dshHome, DSH_SHELL: "1" }
      if (execution.session !== undefined) values.DSH_SESSION_ID = execution.session.id
      for (const [contributor, answer] of answers) yield* addValues(contributor, answer, values)
      return Object.freeze(Object.fromEntries(Object.entries(values).sort(([a], [b]) => byCodeUnits(a, b))))
    }
    // A span only when a tracer is installed: see `whenTraced`.
    const collect = fnWhenTraced("BashEnvRegistry.collect")(collectBody)

    const list = Ref.get(registrations).pipe(
      Effect.map(({ byName }): ReadonlyArray<BashEnvRegistry.Declaration> =>
        [...byName.values()]
          .flatMap(({ keys, name }) => keys.map(({ description, key }) => ({ key, contributor: name, description })))
          .sort((a, b) => byCodeUnits(a.key, b.key))
      ),
      Effect.withSpan("BashEnvRegistry.list")
    )

    return BashEnvRegistry.of({ register, collect, list })
  })

/**
 * The live managed-environment registry, whose `DSH_HOME` is resolved once, when the layer is built:
 * `options.dshHome`, else a non-blank `$DSH_HOME` (read through Effect `Config`), else `~/.dsh`; `~`
 * expanded, made absolute.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (options: Options = {}): Layer.Layer<BashEnvRegistry, ConfigError.ConfigError> =>
  Layer.effect(BashEnvRegistry, make(options))

/**
 * The registry with its options read through `Config`: `layerConfig({ dshHome: Config.string("HOME_DIR") })`.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerConfig = (
  config: Config.Config.Wrap<Options>
): Layer.Layer<BashEnvRegistry, ConfigError.ConfigError> => Layer.unwrapEffect(Effect.map(Config.unwrap(config), layer))
