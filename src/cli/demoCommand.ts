/**
 * `effect-bash demo`: a short guided tour of the bash and task tools through the real stack. The tour
 * is loaded when the subcommand runs, so `run` and `mcp` never load it.
 */
import * as Command from "@effect/cli/Command"
import * as Effect from "effect/Effect"

/**
 * The `demo` subcommand.
 */
export const demoCommand = Command.make("demo", {}, () =>
  Effect.flatMap(Effect.promise(() => import("./demoTour.js")), ({ demo }) => demo())).pipe(
    Command.withDescription("A short guided tour of the bash and task tools through the real stack")
  )
